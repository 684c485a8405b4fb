# Included by the top-level CMakeLists.txt, after every install rule.
# Debian packages made from this build tree by CPack's DEB generator: `corral` (component
# runtime: the binary, its helper, the shipped plugins and registry, and whatever else
# installs without naming a component) and `corral-dev` (component dev: the plugin SDK).
# scripts/package.sh runs it; tests/install/package_test.sh unpacks and uses the result.
#
# Why CPack and not debian/ with dpkg-buildpackage: the packages are made from the build
# CI has just built and tested, with no second compile on a 2-core runner, while what a
# Debian maintainer checks still holds: dpkg-shlibdeps computes Depends from the shared
# libraries actually linked, binaries are stripped, files are root-owned 0644/0755, and
# lintian passes with no errors. The install rules underneath (GNUInstallDirs, two
# components) are the ones dh_auto_install would drive from a debian/ folder.

set(CORRAL_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (the N in corral_X.Y.Z-N)")
set(CORRAL_DEB_MAINTAINER "corral maintainers <maintainers@corral.example>" CACHE STRING
  "Maintainer field of the Debian packages")
set(CORRAL_DEB_DOC ${PROJECT_BINARY_DIR}/packaging/doc)

# The files Debian requires in every package's /usr/share/doc/<package>: the copyright
# (machine-readable, DEP-5) and changelog.Debian.gz (gzip -9n: no timestamp). Only a
# packaging install takes them (EXCLUDE_FROM_ALL), not `cmake --install` into a prefix.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/debian/changelog)
file(MAKE_DIRECTORY ${CORRAL_DEB_DOC})
execute_process(COMMAND gzip -9n -c ${CMAKE_CURRENT_LIST_DIR}/debian/changelog
  OUTPUT_FILE ${CORRAL_DEB_DOC}/changelog.Debian.gz COMMAND_ERROR_IS_FATAL ANY)
set(corral_deb_components runtime dev)
set(corral_deb_packages corral corral-dev)
foreach(component package IN ZIP_LISTS corral_deb_components corral_deb_packages)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${CORRAL_DEB_DOC}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
  # The lintian tags that do not apply here, each with its reason.
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/${package}.lintian-overrides RENAME ${package}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()

# cpack installs from the build tree as it stands: its "preinstall" step builds nothing
# (scripts/package.sh builds the runtime first), so a test can package a tree in use.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME corral)
set(CPACK_PACKAGE_VENDOR "The corral authors")
set(CPACK_PACKAGE_CONTACT ${CORRAL_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${CORRAL_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CORRAL_DEB_RELEASE})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Named, so a rule installed under any other component fails the package test (which
# compares the packages with a plain `cmake --install`) instead of silently going missing.
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/compress_manuals.cmake)
# The version in debian/changelog must be the one being packaged; cpack checks it.
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/check_changelog.cmake)
set(CPACK_CORRAL_DEB_CHANGELOG ${CMAKE_CURRENT_LIST_DIR}/debian/changelog)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME corral)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
# The local provider runs commands under bwrap; dpkg-shlibdeps adds the libraries, but
# for libarchive, which corral loads when it first packs (core/workspace/
# libarchive_forward.cpp), so no binary names it: its package is named here, as dpkg
# knows the library file this build found.
get_filename_component(corral_libarchive_file "${LibArchive_LIBRARIES}" REALPATH)
execute_process(COMMAND dpkg-query -S "${corral_libarchive_file}" OUTPUT_VARIABLE corral_libarchive_owner
                ERROR_QUIET RESULT_VARIABLE corral_libarchive_rc)
if(corral_libarchive_rc EQUAL 0 AND corral_libarchive_owner MATCHES "^([^:]+):")
  set(corral_libarchive_package ${CMAKE_MATCH_1})
else()
  set(corral_libarchive_package "libarchive13t64 | libarchive13")  # not a dpkg system: the usual names
endif()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "bubblewrap, ${corral_libarchive_package}")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "run a command from your working tree in a sandbox
corral runs a command from the current working tree inside a sandbox from a
provider (a local bubblewrap jail, E2B, Daytona, Docker Sandboxes, Kubernetes
or a plugin your own team wrote) and returns its output, its exit code and a
handle to reuse or clean up the sandbox.

This package ships the corral command, the built-in provider plugins and
their registry.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME corral-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION devel)
# What corral-sdk.pc Requires and corralConfig.cmake finds (RapidJSON, libcurl, OpenSSL).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "rapidjson-dev, libcurl4-openssl-dev | libcurl-dev, libssl-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "corral, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION "SDK to build provider plugins for corral
corral runs a command from the current working tree inside a sandbox from a
provider plugin. This package holds what a plugin is built with: the SDK
headers, its static library, a CMake package (find_package(corral)) and a
pkg-config file (corral-sdk).")

include(CPack)

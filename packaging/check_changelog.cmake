# Run by cpack: refuses to package when debian/changelog's latest entry is not the
# version being packaged (Debian takes a package's version from its changelog).
file(STRINGS "${CPACK_CORRAL_DEB_CHANGELOG}" top LIMIT_COUNT 1)
set(expected "${CPACK_PACKAGE_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(found "")
if(top MATCHES "^corral \\(([^)]+)\\)")
  set(found "${CMAKE_MATCH_1}")
endif()
if(NOT found STREQUAL expected)
  message(FATAL_ERROR "packaging/debian/changelog's latest entry is '${found}', but the "
    "package is corral ${expected}: add an entry for ${expected} at the top (dch -v ${expected})")
endif()

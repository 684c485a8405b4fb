# Run by cpack: refuses to package when debian/changelog's latest entry is not the
# version being packaged (Debian takes a package's version from its changelog).
file(STRINGS "${CPACK_CORRAL_DEB_CHANGELOG}" top LIMIT_COUNT 1)
set(expected "${CPACK_PACKAGE_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
if(NOT top MATCHES "^corral \\(([^)]+)\\)" OR NOT CMAKE_MATCH_1 STREQUAL expected)
  message(FATAL_ERROR "packaging/debian/changelog starts with '${top}', but the package "
    "is corral ${expected}: add an entry for ${expected} at the top (dch -v ${expected})")
endif()

# Run by cpack once it has installed into its staging folders (CPACK_PRE_BUILD_SCRIPTS):
# compresses every manual page with gzip -9n, as dh_compress does, since Debian requires
# manual pages compressed and the install rules leave them plain for other prefixes.
file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
foreach(file IN LISTS staged)
  if(file MATCHES "/share/man/" AND NOT file MATCHES "\\.gz$" AND NOT IS_SYMLINK "${file}")
    execute_process(COMMAND gzip -9n "${file}" COMMAND_ERROR_IS_FATAL ANY)
  endif()
endforeach()

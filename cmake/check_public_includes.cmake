# check_public_includes.cmake — server/ and clients/ include the crypto core's public
# headers only ("smcrypt/...", crypto/include); an #include whose path is or passes through
# a crypto/ folder ("crypto/...", <crypto/...>, "../crypto/...") there is an error
# (DESIGN.md, "Layout").
#
#   cmake -DSMCRYPT_SOURCE_DIR=<source root> [-DSTAMP=<file>] -P check_public_includes.cmake
#
# Prints one "<file>:<line>: error: <directive> ..." line per violation and exits non-zero; on
# success touches STAMP when given (the build's custom command uses it).

cmake_minimum_required(VERSION 3.25)

if(NOT SMCRYPT_SOURCE_DIR)
  message(FATAL_ERROR "check_public_includes.cmake: set -DSMCRYPT_SOURCE_DIR=<source root>")
endif()

file(GLOB_RECURSE files RELATIVE ${SMCRYPT_SOURCE_DIR}
  ${SMCRYPT_SOURCE_DIR}/server/*.cc ${SMCRYPT_SOURCE_DIR}/server/*.h
  ${SMCRYPT_SOURCE_DIR}/server/*.inc
  ${SMCRYPT_SOURCE_DIR}/clients/*.cc ${SMCRYPT_SOURCE_DIR}/clients/*.h
  ${SMCRYPT_SOURCE_DIR}/clients/*.inc)
list(SORT files)

set(violations 0)
foreach(file IN LISTS files)
  file(READ ${SMCRYPT_SOURCE_DIR}/${file} text)
  if(NOT text MATCHES "#[ \t]*include[ \t]*[\"<]([^\">]*/)?crypto/")
    continue()
  endif()
  # One list element per line: first drop the characters that CMake lists treat
  # specially, so the line numbers stay exact.
  string(REGEX REPLACE "[][;\\\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*/)?crypto/")
      string(STRIP "${line}" directive)
      message(NOTICE "${file}:${line_no}: error: ${directive}: server/ and clients/ may "
                     "include only the public headers \"smcrypt/...\" (crypto/include/smcrypt/)")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} private crypto include(s) in server/ or clients/ "
                      "(DESIGN.md, \"Layout\")")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()

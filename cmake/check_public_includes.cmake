# check_public_includes.cmake — two include rules (docs/design.md, "Layout"):
#   1. server/ and clients/, in every folder below them, include the crypto core's public
#      headers only ("smcrypt/...", crypto/include): an #include whose path is or passes
#      through a crypto/ folder ("crypto/...", <crypto/...>, "../crypto/...") is an error;
#   2. server/engine/ (smcrypt_engine, built without gRPC for the TSan build) includes no
#      gRPC or protobuf header: <grpc...>, "grpcpp/...", "proto/...", google/protobuf/...
#      and generated "*.pb.h" headers are errors there.
#
#   cmake -DSMCRYPT_SOURCE_DIR=<source root> [-DSTAMP=<file>] -P check_public_includes.cmake
#
# Prints one "<file>:<line>: error: <directive> ..." line per violation and exits non-zero; on
# success touches STAMP when given (the build's custom command uses it).

cmake_minimum_required(VERSION 3.25)

if(NOT SMCRYPT_SOURCE_DIR)
  message(FATAL_ERROR "check_public_includes.cmake: set -DSMCRYPT_SOURCE_DIR=<source root>")
endif()

# GLOB_RECURSE: server/*.cc matches server/engine/x.cc, server/service/x.cc and so on.
file(GLOB_RECURSE files RELATIVE ${SMCRYPT_SOURCE_DIR}
  ${SMCRYPT_SOURCE_DIR}/server/*.cc ${SMCRYPT_SOURCE_DIR}/server/*.h
  ${SMCRYPT_SOURCE_DIR}/server/*.inc
  ${SMCRYPT_SOURCE_DIR}/clients/*.cc ${SMCRYPT_SOURCE_DIR}/clients/*.h
  ${SMCRYPT_SOURCE_DIR}/clients/*.inc)
list(SORT files)

set(crypto_include "#[ \t]*include[ \t]*[\"<]([^\">]*/)?crypto/")
set(rpc_include "#[ \t]*include[ \t]*[\"<](grpc|proto/|google/protobuf/|[^\">]*\\.pb\\.h[\">])")

set(violations 0)
foreach(file IN LISTS files)
  file(READ ${SMCRYPT_SOURCE_DIR}/${file} text)
  set(in_engine FALSE)
  if(file MATCHES "^server/engine/")
    set(in_engine TRUE)
  endif()
  if(NOT text MATCHES "${crypto_include}" AND NOT (in_engine AND text MATCHES "${rpc_include}"))
    continue()
  endif()
  # One list element per line: first drop the characters that CMake lists treat
  # specially, so the line numbers stay exact.
  string(REGEX REPLACE "[][;\\\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    string(STRIP "${line}" directive)
    if(line MATCHES "^[ \t]*${crypto_include}")
      message(NOTICE "${file}:${line_no}: error: ${directive}: server/ and clients/ may "
                     "include only the public headers \"smcrypt/...\" (crypto/include/smcrypt/)")
      math(EXPR violations "${violations} + 1")
    elseif(in_engine AND line MATCHES "^[ \t]*${rpc_include}")
      message(NOTICE "${file}:${line_no}: error: ${directive}: server/engine/ (smcrypt_engine) "
                     "may not include gRPC or protobuf headers")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} forbidden include(s) in server/ or clients/ "
                      "(docs/design.md, \"Layout\")")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()

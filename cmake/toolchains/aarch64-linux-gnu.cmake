# aarch64-linux-gnu.cmake — cross build of smcrypt for arm64 Linux on a Debian 12 amd64
# host, against Debian's multiarch packages (docs/backends.md, "arm64"):
#
#   cmake -S . -B build-arm64 -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# Compiler: g++-aarch64-linux-gnu (gcc 12). Libraries: the :arm64 -dev packages, installed
# beside the amd64 ones (deploy/local/install-deps.sh): their libraries and CMake package
# files are in /usr/lib/aarch64-linux-gnu, their headers in /usr/include (shared by every
# architecture) and /usr/include/aarch64-linux-gnu. Host tools (protoc, grpc_cpp_plugin)
# are the amd64 programs in /usr/bin. Test programs run under qemu-user
# (CMAKE_CROSSCOMPILING_EMULATOR), so ctest and gtest_discover_tests work unchanged.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Debian multiarch keeps both architectures under one root (/usr): the search prefixes stay
# the host's, CMAKE_LIBRARY_ARCHITECTURE makes find_package/find_library look in
# /usr/lib/aarch64-linux-gnu first, and the amd64 library folder is ignored outright so
# that nothing of the other architecture is picked up by a fallback search.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake
                      /usr/include/x86_64-linux-gnu)
# Programs (protoc, grpc_cpp_plugin, python3) are the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (OpenSSL, Botan) reads the arm64 .pc files only; Botan has no :arm64 package
# installed, so the tests that use it as a second oracle are not built in (they skip).
set(PKG_CONFIG_EXECUTABLE /usr/bin/aarch64-linux-gnu-pkg-config CACHE FILEPATH "")
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# qemu-user runs the arm64 test programs; -cpu max implements FEAT_PMULL, FEAT_SHA256,
# FEAT_SM3 and FEAT_SM4, so every arm64 back end can run (SMCRYPT_CPU_DISABLE hides them).
# -L / : the dynamic loader and libc are the multiarch libc6:arm64 in /lib/aarch64-linux-gnu,
# the same build as the arm64 libraries beside them. Not /usr/aarch64-linux-gnu: that is the
# cross compiler's libc6-arm64-cross (an older 2.36 build), and its loader with the
# multiarch libraries hangs in the first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64-static -cpu max -L /
    CACHE STRING "How ctest runs arm64 programs")

# prometheus-cpp: prometheus-cpp-dev:arm64 cannot be installed beside prometheus-cpp-dev
# (amd64), which the host build needs: in Debian 12 it depends on the civetweb package,
# which is not Multi-Arch, so apt would replace civetweb (amd64) and remove the amd64
# prometheus-cpp-dev. Only the arm64 runtime libraries
# (libprometheus-cpp-core1.0:arm64, libprometheus-cpp-pull1.0:arm64) are installed, so the
# package file in aarch64-linux-gnu/ next to this file defines the imported targets from the
# shared headers and those libraries.
set(prometheus-cpp_DIR ${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu/prometheus-cpp
    CACHE PATH "prometheus-cpp targets for the arm64 cross build")

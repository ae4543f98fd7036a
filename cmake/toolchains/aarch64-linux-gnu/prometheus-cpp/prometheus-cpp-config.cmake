# prometheus-cpp-config.cmake — prometheus-cpp::core and prometheus-cpp::pull for the arm64
# cross build (cmake/toolchains/aarch64-linux-gnu.cmake says why this file exists).
#
# Headers: /usr/include/prometheus from prometheus-cpp-dev (amd64). They are the same for
# every architecture: no generated header there depends on the target (the export headers
# only define visibility attributes; nothing tests __x86_64__, type sizes or the like).
# Libraries: the arm64 runtime packages' shared objects, by full path (their soname
# files; there is no unversioned .so without the -dev package).
set(_smcrypt_prom_lib /usr/lib/aarch64-linux-gnu)
foreach(_f /usr/include/prometheus/registry.h /usr/include/prometheus/exposer.h
           ${_smcrypt_prom_lib}/libprometheus-cpp-core.so.1.0
           ${_smcrypt_prom_lib}/libprometheus-cpp-pull.so.1.0)
  if(NOT EXISTS ${_f})
    set(prometheus-cpp_FOUND FALSE)
    set(prometheus-cpp_NOT_FOUND_MESSAGE
        "${_f} is missing: install prometheus-cpp-dev (amd64) and libprometheus-cpp-core1.0:arm64 libprometheus-cpp-pull1.0:arm64")
    return()
  endif()
endforeach()

if(NOT TARGET prometheus-cpp::core)
  add_library(prometheus-cpp::core SHARED IMPORTED)
  set_target_properties(prometheus-cpp::core PROPERTIES
    IMPORTED_LOCATION ${_smcrypt_prom_lib}/libprometheus-cpp-core.so.1.0
    IMPORTED_SONAME libprometheus-cpp-core.so.1.0
    INTERFACE_INCLUDE_DIRECTORIES /usr/include)
endif()
if(NOT TARGET prometheus-cpp::pull)
  add_library(prometheus-cpp::pull SHARED IMPORTED)
  set_target_properties(prometheus-cpp::pull PROPERTIES
    IMPORTED_LOCATION ${_smcrypt_prom_lib}/libprometheus-cpp-pull.so.1.0
    IMPORTED_SONAME libprometheus-cpp-pull.so.1.0
    INTERFACE_INCLUDE_DIRECTORIES /usr/include
    INTERFACE_LINK_LIBRARIES prometheus-cpp::core)
endif()
set(prometheus-cpp_FOUND TRUE)
set(prometheus-cpp_VERSION 1.0.1)
unset(_smcrypt_prom_lib)

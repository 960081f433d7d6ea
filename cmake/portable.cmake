# LOUSHO_PORTABLE: the libraries of a release build that runs on any Linux with glibc >= 2.34 and
# nothing else installed (scripts/release). What Debian ships as static archives is linked in
# (yaml-cpp, PCRE2, OpenSSL, libstdc++); what it ships only as shared
# objects is built from the copies in third_party/ (jsoncpp, header-only cpp-httplib). The
# result needs glibc (and libgcc_s, which every glibc system has) alone, and no run path: the HTTP module is found beside the binary.
# Defines the targets the main list links by name: JsonCpp::JsonCpp, PkgConfig::PCRE2,
# PkgConfig::HTTPLIB, and LOUSHO_YAML.

function(lousho_static_archive var name)
  find_library(${var} NAMES lib${name}.a REQUIRED)
endfunction()

# jsoncpp 1.9.5 (the version Debian 12 ships), compiled in.
add_library(lousho_jsoncpp STATIC
  ${CMAKE_SOURCE_DIR}/third_party/jsoncpp/src/json_reader.cpp
  ${CMAKE_SOURCE_DIR}/third_party/jsoncpp/src/json_value.cpp
  ${CMAKE_SOURCE_DIR}/third_party/jsoncpp/src/json_writer.cpp)
target_include_directories(lousho_jsoncpp SYSTEM PUBLIC ${CMAKE_SOURCE_DIR}/third_party/jsoncpp/include)
set_target_properties(lousho_jsoncpp PROPERTIES POSITION_INDEPENDENT_CODE ON)
# Third-party code: its warnings are not ours to fix.
target_compile_options(lousho_jsoncpp PRIVATE -w)
add_library(JsonCpp::JsonCpp ALIAS lousho_jsoncpp)


lousho_static_archive(LOUSHO_YAML_A yaml-cpp)
set(LOUSHO_YAML ${LOUSHO_YAML_A})

lousho_static_archive(LOUSHO_PCRE2_A pcre2-8)
add_library(PkgConfig::PCRE2 INTERFACE IMPORTED)
set_target_properties(PkgConfig::PCRE2 PROPERTIES INTERFACE_LINK_LIBRARIES ${LOUSHO_PCRE2_A})

# cpp-httplib 0.11.4 header-only (Debian's split build exists only as a shared object), with
# TLS from static archives. No gzip/brotli: the transport turns decompression off (SSE must
# arrive as produced), so they would only add code; and Debian's libz.a is not
# position-independent, so it cannot go into the module.
lousho_static_archive(LOUSHO_SSL_A ssl)
lousho_static_archive(LOUSHO_CRYPTO_A crypto)
add_library(PkgConfig::HTTPLIB INTERFACE IMPORTED)
set_target_properties(PkgConfig::HTTPLIB PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${CMAKE_SOURCE_DIR}/third_party/cpp-httplib
  INTERFACE_COMPILE_DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT
  INTERFACE_LINK_LIBRARIES "${LOUSHO_SSL_A};${LOUSHO_CRYPTO_A};Threads::Threads;${CMAKE_DL_LIBS}")

# Called once the targets exist: the C++ runtime linked in, no run path, only the symbols used.
function(lousho_portable_link)
  foreach(t lousho lousho_http)
    if(APPLE)
      # macOS: libc++ is part of the system; only unused code goes.
      target_link_options(${t} PRIVATE -Wl,-dead_strip)
    else()
      # libgcc stays shared: its static unwinder calls _dl_find_object (glibc 2.35) when built
      # on a newer glibc. libgcc_s.so.1 comes with glibc everywhere (Debian's libc6 depends on
      # it; glibc loads it itself for pthread_cancel), built for that system's glibc.
      target_link_options(${t} PRIVATE -static-libstdc++ -Wl,--as-needed -Wl,--gc-sections)
      target_sources(${t} PRIVATE ${CMAKE_SOURCE_DIR}/cmake/glibc_compat.cpp)
    endif()
    set_target_properties(${t} PROPERTIES SKIP_BUILD_RPATH ON INSTALL_RPATH "")
  endforeach()
endfunction()

# LOUSHO_PORTABLE: the libraries of a release build that needs nothing but the C library (glibc,
# and libgcc_s, which every glibc system has; on macOS the system's libc++). Every third-party
# library is linked in from a static archive: the system's where it ships one (Debian 12 ships
# yaml-cpp, PCRE2, OpenSSL, gumbo), else one built from a pinned source by
# third_party/build-static-deps into a folder on CMAKE_PREFIX_PATH (the release workflow's
# older-glibc container and macOS). jsoncpp and header-only cpp-httplib are compiled from the
# copies in third_party/. No run path: the HTTP module is found beside the binary.
# Defines the targets the main list links by name: JsonCpp::JsonCpp, PkgConfig::PCRE2,
# PkgConfig::HTTPLIB, and LOUSHO_YAML and LOUSHO_CHAT_LIBS.

# Finds lib<name>.a (CMAKE_PREFIX_PATH first, then the system) into `var`; the folder beside its
# lib/, include/, goes on the include path (a prefix of build-static-deps, Homebrew's).
function(lousho_static_archive var name)
  find_library(${var} NAMES lib${name}.a REQUIRED)
  get_filename_component(lib_dir ${${var}} DIRECTORY)
  get_filename_component(include_dir ${lib_dir}/../include ABSOLUTE)
  if(IS_DIRECTORY ${include_dir} AND NOT include_dir STREQUAL "/usr/include")
    include_directories(SYSTEM ${include_dir})
  endif()
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
# gumbo is linked by the main list (LOUSHO_GUMBO_ARCHIVE); found here for its headers' folder.
lousho_static_archive(LOUSHO_GUMBO_A gumbo)
add_library(PkgConfig::PCRE2 INTERFACE IMPORTED)
set_target_properties(PkgConfig::PCRE2 PROPERTIES INTERFACE_LINK_LIBRARIES ${LOUSHO_PCRE2_A})

# `lousho chat`: cmark from its archive everywhere. Linux: libedit and ncurses' tinfo from their
# archives too (Debian's libedit.a needs libbsd.a and libmd.a, linked when found; a libedit built
# by build-static-deps needs neither). macOS: libedit and ncurses are part of the system (the
# SDK), linked as system libraries like libc++.
lousho_static_archive(LOUSHO_CMARK_A cmark)
if(APPLE)
  set(LOUSHO_CHAT_LIBS ${LOUSHO_CMARK_A} edit ncurses)
else()
  lousho_static_archive(LOUSHO_EDIT_A edit)
  lousho_static_archive(LOUSHO_TINFO_A tinfo)
  set(LOUSHO_CHAT_LIBS ${LOUSHO_CMARK_A} ${LOUSHO_EDIT_A} ${LOUSHO_TINFO_A})
  foreach(extra bsd md)
    find_library(LOUSHO_${extra}_A NAMES lib${extra}.a)
    if(LOUSHO_${extra}_A)
      list(APPEND LOUSHO_CHAT_LIBS ${LOUSHO_${extra}_A})
    endif()
  endforeach()
endif()

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

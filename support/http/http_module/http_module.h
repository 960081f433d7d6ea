// The entry point of the HTTP transport module (a shared object loaded on first use).
#pragma once

#include "support/http/http_client.h"

namespace lousho::agent {

inline constexpr char kHttpModuleFile[] = "liblousho_http.so";
inline constexpr char kHttpModuleEntry[] = "lousho_http_post_stream";

// One streaming POST; the module and the program share one C++ runtime, so C++ types cross.
using PostStreamFn = void (*)(const BaseUrl& base, const HttpOptions& options,
                              const HttpPostRequest& request, const BodyCallback& on_body,
                              const CancelToken& cancel, HttpStreamResult* out);

}  // namespace lousho::agent

extern "C" void lousho_http_post_stream(const lousho::agent::BaseUrl& base,
                                        const lousho::agent::HttpOptions& options,
                                        const lousho::agent::HttpPostRequest& request,
                                        const lousho::agent::BodyCallback& on_body,
                                        const lousho::CancelToken& cancel,
                                        lousho::agent::HttpStreamResult* out);

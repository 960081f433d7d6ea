// The `fetch` tool: an HTTP(S) GET through the providers' HTTP module (support/http), HTML made
// readable Markdown (html_markdown.h), text and JSON as they are, images as image content,
// other binary refused. Off unless the spec lists it; asked about by default, and permission
// rules match the URL's host ("docs.python.org", "*.github.com").
#include <string>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/html_markdown.h"
#include "agent/tools/tool_util.h"
#include "support/http/http_client.h"
#include "support/text.h"

namespace lousho::agent::tools {
namespace {

constexpr size_t kMaxBodyBytes = size_t{10} << 20;  // what is read of a response
constexpr int kMaxHops = 5;                         // redirects to another host
constexpr size_t kFetchLines = 2000;

struct Target {
  BaseUrl origin;
  std::string path;  // with the query
};

// http(s)://host[:port]/path?query (the fragment dropped).
Result<Target> ParseTarget(const std::string& url) {
  auto origin = ParseBaseUrl(url);
  if (!origin.ok()) return MakeError(ErrorCode::kToolArgs, "url: expected http:// or https://");
  Target t;
  t.origin = *origin;
  t.origin.path_prefix.clear();
  const size_t host_at = url.find("://") + 3;
  const size_t rest = url.find_first_of("/?#", host_at);
  std::string path = rest == std::string::npos ? "/" : url.substr(rest);
  path = path.substr(0, path.find('#'));
  if (path.empty() || path[0] == '?') path = "/" + path;
  t.path = path;
  return t;
}

std::string HeaderOf(const HttpStreamResult& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

bool IsTextType(const std::string& type) {
  return type.rfind("text/", 0) == 0 || type.find("json") != std::string::npos ||
         type.find("xml") != std::string::npos || type.find("javascript") != std::string::npos ||
         type.find("yaml") != std::string::npos || type.find("toml") != std::string::npos;
}

struct Response {
  HttpStreamResult result;
  std::string body;
  bool too_large = false;
  std::string url;  // after redirects
};

class FetchTool : public Tool {
 public:
  explicit FetchTool(ProxySetting proxy) : proxy_(std::move(proxy)) {}
  std::string name() const override { return "fetch"; }
  std::string description() const override {
    return "Fetch a web page or file over HTTP(S) (GET). format: markdown (default; HTML is "
           "turned into readable Markdown), text (the visible text of HTML) or raw (the body as "
           "it came). Text and JSON come as they are, images as images; other binary content "
           "is refused. A long result is cut, and the whole of it is saved to a file the result "
           "names.";
  }
  Json::Value parameters() const override {
    Json::Value format = PropSchema("string", "markdown (default), text or raw");
    format["enum"] = Json::Value(Json::arrayValue);
    for (const char* f : {"markdown", "text", "raw"}) format["enum"].append(f);
    return ObjectSchema(
        {{"url", PropSchema("string", "The http:// or https:// URL")}, {"format", format}},
        {"url"});
  }
  ToolKind kind() const override { return ToolKind::kFetch; }
  bool read_only() const override { return false; }  // asked by default: it reaches out
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return "fetch " + Shorten(StringOr(args, "url"), 100);
  }
  // Permission rules match the host (with its port when the URL names one).
  std::string PermissionSubject(const Json::Value& args) const override {
    std::string url = StringOr(args, "url");
    const size_t sep = url.find("://");
    if (sep == std::string::npos) return url;
    const size_t end = url.find_first_of("/?#", sep + 3);
    std::string host =
        AsciiLower(url.substr(sep + 3, end == std::string::npos ? end : end - sep - 3));
    return host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1);
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto url = a.String("url", true);
    auto format = a.String("format", false);
    if (!a.ok()) return ToolOutput::Error("fetch: " + a.error());
    const std::string fmt = format ? AsciiLower(*format) : "markdown";
    if (fmt != "markdown" && fmt != "text" && fmt != "raw")
      return ToolOutput::Error("fetch: format: expected markdown, text or raw");
    auto got = Get(*url, proxy_, ctx.cancel);
    if (!got.ok()) return ToolOutput::Error("fetch: " + got.error().message);
    return Present(*got, fmt, ctx);
  }

 private:
  // GET with redirects: the HTTP module follows those on the same origin, this those to another
  // host on the same scheme.
  static Result<Response> Get(const std::string& url, const ProxySetting& proxy,
                              const CancelToken& cancel) {
    Response r;
    r.url = url;
    for (int hop = 0; hop <= kMaxHops; ++hop) {
      auto target = ParseTarget(r.url);
      if (!target.ok()) return target.error();
      HttpOptions options;
      options.idle_timeout_s = 30;
      options.proxy = proxy;
      HttpClient client(target->origin, options);
      HttpPostRequest req;
      req.method = "GET";
      req.path = target->path;
      req.headers = {{"User-Agent", "lousho-fetch/1"},
                     {"Accept", "text/html, text/markdown, text/plain, application/json, */*"}};
      r.body.clear();
      r.too_large = false;
      r.result = client.PostStream(
          req,
          [&r](std::string_view bytes, const MoreReady&) {
            if (r.body.size() + bytes.size() > kMaxBodyBytes) {
              r.too_large = true;
              return false;
            }
            r.body.append(bytes);
            return true;
          },
          cancel);
      if (r.result.outcome != HttpOutcome::kRedirected) return Finished(std::move(r));
      const std::string next = HeaderOf(r.result, "location");
      auto from = ParseTarget(r.url);
      auto to = ParseTarget(next);
      if (next.empty() || !to.ok() || to->origin.scheme != from->origin.scheme)
        return MakeError(ErrorCode::kToolIo, "redirect not followed: " + r.result.transport_error);
      r.url = next;
    }
    return MakeError(ErrorCode::kToolIo, "too many redirects");
  }

  static Result<Response> Finished(Response r) {
    switch (r.result.outcome) {
      case HttpOutcome::kCompleted:
        break;
      case HttpOutcome::kStopped:
        if (r.too_large) return r;
        break;
      case HttpOutcome::kCancelled:
        return MakeError(ErrorCode::kCancelled, "cancelled");
      default:
        return MakeError(ErrorCode::kToolIo, r.result.transport_error.empty()
                                                 ? "the request failed"
                                                 : r.result.transport_error);
    }
    if (r.result.status >= 400)
      return MakeError(ErrorCode::kToolIo, "HTTP " + std::to_string(r.result.status) + " from " +
                                               r.url + ": " + Shorten(r.result.error_body, 300));
    return r;
  }

  static ToolOutput Present(const Response& r, const std::string& fmt, ToolContext& ctx) {
    const std::string type = AsciiLower(HeaderOf(r.result, "content-type"));
    const std::string mime = type.substr(0, type.find(';'));
    ToolOutput out;
    out.details["url"] = r.url;
    out.details["status"] = r.result.status;
    out.details["contentType"] = mime;
    out.details["bytes"] = Json::UInt64(r.body.size());
    if (const char* image = ImageMime(r.body)) {
      if (r.too_large) return ToolOutput::Error("fetch: the image is over 10 MiB");
      out.content.push_back(ContentBlock::Text("Fetched image " + r.url + " [" + image + ", " +
                                               ByteSize(r.body.size()) + "]"));
      out.content.push_back(ContentBlock::Image(image, Base64(r.body)));
      return out;
    }
    const bool html = mime == "text/html" || mime == "application/xhtml+xml" ||
                      (mime.empty() && r.body.find("<html") != std::string::npos);
    if (!html && !IsTextType(mime) && (LooksBinary(r.body) || !mime.empty()))
      return ToolOutput::Error("fetch: " + r.url + " is binary content (" +
                               (mime.empty() ? "unknown type" : mime) + ", " +
                               ByteSize(r.body.size()) + "); not shown");
    std::string text = r.body;
    if (html && fmt != "raw") {
      auto target = ParseTarget(r.url);
      const std::string base = target.ok() ? target->origin.scheme + "://" + target->origin.host +
                                                 PortSuffix(target->origin)
                                           : "";
      text = fmt == "markdown" ? HtmlToMarkdown(r.body, base) : HtmlToText(r.body);
    }
    bool cut = false;
    std::string body = CutAndSave(ctx, "fetch", text, kFetchLines, &cut);
    if (r.too_large) body += "\n[Only the first " + ByteSize(kMaxBodyBytes) + " were read]";
    out.content.push_back(ContentBlock::Text(std::move(body)));
    out.details["truncated"] = cut || r.too_large;
    return out;
  }

  static std::string PortSuffix(const BaseUrl& u) {
    const bool usual =
        (u.scheme == "http" && u.port == 80) || (u.scheme == "https" && u.port == 443);
    return usual ? "" : ":" + std::to_string(u.port);
  }

  ProxySetting proxy_;  // the agent's `proxy:`; unset: the environment's
};

}  // namespace

std::unique_ptr<Tool> MakeFetchTool(const ProxySetting& proxy) {
  return std::make_unique<FetchTool>(proxy);
}

}  // namespace lousho::agent::tools

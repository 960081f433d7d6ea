// Provider endpoints and model metadata, as the spec's `providers:` entries and the built-in
// catalogue describe them. Plain data; no I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace lousho::config {

struct ModelInfo {
  std::string id;    // id at the provider, e.g. "gpt-4o-mini"
  std::string name;  // display name
  long long context_window = 0;
  long long max_output = 0;  // 0: unknown
  // Prices in USD per million tokens.
  double input_price = 0;
  double output_price = 0;
  double cache_read_price = 0;
  double cache_write_price = 0;
  bool images = false;     // accepts image input
  bool reasoning = false;  // has a thinking/reasoning mode
};

struct ProviderSettings {
  std::string name;          // "openai", "anthropic", or the spec's key
  std::string api;           // "openai-chat" | "anthropic-messages"
  std::string base_url;      // e.g. "https://api.openai.com/v1", "https://api.anthropic.com"
  std::string api_key_env;   // e.g. "OPENAI_API_KEY"; empty: no key needed (local servers)
  std::string base_url_env;  // e.g. "OPENAI_BASE_URL": overrides base_url when set
  std::map<std::string, std::string> headers;  // extra request headers
  std::string auth;  // anthropic-messages: "x-api-key" (default) or "bearer"
  std::vector<ModelInfo> models;
  int connect_timeout_s = 10;
  int idle_timeout_s = 120;  // per-read idle gap; reasoning models pause
  int max_retries = 3;       // retries after the first attempt
  long retry_base_ms = 1000;
  long retry_max_delay_ms = 60000;
};

}  // namespace lousho::config

// Tests of what local model servers report about their limits: each server's answer as its
// documentation shows it, and the asking over loopback HTTP (a vLLM-style model list, an Ollama
// that answers /api/version and /api/show, a server that says nothing).
#include "agent/providers/local_limits.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/providers/factory.h"
#include "config/model_catalog.h"

namespace lousho::agent {
namespace {

Json::Value J(const char* text) { return *ParseJson(text); }

TEST(LocalLimitsTest, EachServersAnswer) {
  EXPECT_EQ(ContextFromLlamaProps(J(R"({"default_generation_settings":{"n_ctx":8192}})")), 8192);
  EXPECT_EQ(ContextFromLlamaProps(J(R"({"n_ctx":4096})")), 4096);
  EXPECT_EQ(ContextFromLlamaProps(J(R"({"default_generation_settings":{"n_ctx":-1}})")), 0);
  // Ollama: the num_ctx it runs with wins over the model's own length.
  EXPECT_EQ(ContextFromOllamaShow(J(R"({"parameters":"stop \"<|im_end|>\"\nnum_ctx 16384",
      "model_info":{"qwen2.context_length":32768}})")),
            16384);
  EXPECT_EQ(ContextFromOllamaShow(J(R"({"model_info":{"general.architecture":"llama",
      "llama.context_length":131072}})")),
            131072);
  EXPECT_EQ(ContextFromOllamaShow(J(R"({"model_info":"x"})")), 0);
  const Json::Value list = J(R"({"object":"list","data":[
      {"id":"a","max_model_len":4096},
      {"id":"b","loaded_context_length":8192,"max_context_length":32768},
      {"id":"c","context_length":200000}]})");
  EXPECT_EQ(ContextFromModelList(list, "a"), 4096);
  EXPECT_EQ(ContextFromModelList(list, "b"), 8192);
  EXPECT_EQ(ContextFromModelList(list, "c"), 200000);
  EXPECT_EQ(ContextFromModelList(list, "zzz"), 0);
  EXPECT_EQ(ContextFromModelList(J(R"({"data":[{"id":"only","max_model_len":2048}]})"), "x"), 2048);
  EXPECT_EQ(ContextFromModelList(J(R"({"data":"nope"})"), "a"), 0);
}

TEST(LocalLimitsTest, OnlyLocalOpenAiCompatibleProvidersWithoutAWindowAsk) {
  BaseUrl local{"http", "127.0.0.1", 8000, "/v1"};
  BaseUrl remote{"https", "api.example.com", 443, "/v1"};
  config::ProviderSettings vllm = *config::FindBuiltinProvider("vllm");
  vllm.base_url = "http://gpu-box:8000/v1";
  EXPECT_TRUE(AsksServerForLimits(vllm, remote, 0));
  EXPECT_FALSE(AsksServerForLimits(vllm, remote, 4096)) << "a known window wins";
  config::ProviderSettings mine;
  mine.name = "mine";
  mine.api = "openai-chat";
  EXPECT_TRUE(AsksServerForLimits(mine, local, 0));
  EXPECT_FALSE(AsksServerForLimits(mine, remote, 0));
  EXPECT_FALSE(AsksServerForLimits(*config::FindBuiltinProvider("anthropic"), local, 0));
}

using Answers = std::map<std::string, std::string>;

// A server on 127.0.0.1 answering GET and POST from a table, recording what was asked.
class LimitsServer {
 public:
  explicit LimitsServer(Answers answers) : answers_(std::move(answers)) {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      const std::string key = req.method + " " + req.path;
      {
        std::lock_guard<std::mutex> lock(mu_);
        asked_.push_back(key);
      }
      auto it = answers_.find(key);
      if (it == answers_.end()) {
        res.status = 404;
        return;
      }
      res.set_content(it->second, "application/json");
    };
    svr_.Get(".*", handler);
    svr_.Post(".*", handler);
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LimitsServer() {
    svr_.stop();
    thread_.join();
  }
  BaseUrl base() const { return BaseUrl{"http", "127.0.0.1", port_, "/v1"}; }
  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(mu_);
    return asked_;
  }

 private:
  std::map<std::string, std::string> answers_;
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> asked_;
};

config::ProviderSettings Compatible() {
  config::ProviderSettings s;
  s.name = "openai-compatible";
  s.api = "openai-chat";
  return s;
}

TEST(LocalLimitsTest, AsksTheServerUntilOneAnswers) {
  LimitsServer vllm(Answers{{"GET /v1/models", R"({"data":[{"id":"m","max_model_len":12288}]})"}});
  EXPECT_EQ(AskContextWindow(Compatible(), vllm.base(), "", "m", CancelToken()), 12288);
  EXPECT_EQ(vllm.asked().back(), "GET /v1/models");

  LimitsServer ollama(Answers{{"GET /api/version", R"({"version":"0.12.0"})"},
                              {"POST /api/show", R"({"parameters":"num_ctx 8192"})"}});
  EXPECT_EQ(AskContextWindow(Compatible(), ollama.base(), "", "m", CancelToken()), 8192);

  LimitsServer silent(Answers{});
  EXPECT_EQ(AskContextWindow(Compatible(), silent.base(), "", "m", CancelToken()), 0);
  for (const std::string& asked : silent.asked())
    EXPECT_NE(asked, "POST /api/show") << "only an Ollama server is asked to show a model";
}

TEST(LocalLimitsTest, TheProvidersWindowIsTheServersForAnUnknownModel) {
  LimitsServer llama(Answers{{"GET /props", R"({"default_generation_settings":{"n_ctx":65536}})"}});
  config::ProviderSettings s = *config::FindBuiltinProvider("llamacpp");
  s.base_url = "http://127.0.0.1:" + std::to_string(llama.base().port) + "/v1";
  auto p = MakeHttpProvider(s, "local-model", {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->ContextWindow(), 65536);
  EXPECT_EQ((*p)->ContextWindow(), 65536);
  EXPECT_EQ(llama.asked(), std::vector<std::string>{"GET /props"}) << "asked once";
}

}  // namespace
}  // namespace lousho::agent

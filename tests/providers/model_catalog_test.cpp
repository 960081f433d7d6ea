// Tests of the built-in provider and model catalogue.
#include "config/model_catalog.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace lousho::config {
namespace {

TEST(CatalogTest, BuiltinProviders) {
  auto names = BuiltinProviderNames();
  for (const char* n :
       {"openai", "anthropic", "ollama", "openrouter", "lmstudio", "llamacpp", "vllm"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    ASSERT_NE(FindBuiltinProvider(n), nullptr) << n;
  }
  EXPECT_EQ(FindBuiltinProvider("nope"), nullptr);
  const ProviderSettings* openai = FindBuiltinProvider("openai");
  EXPECT_EQ(openai->api, "openai-chat");
  EXPECT_EQ(openai->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(openai->api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(openai->base_url_env, "OPENAI_BASE_URL");
  const ProviderSettings* anthropic = FindBuiltinProvider("anthropic");
  EXPECT_EQ(anthropic->api, "anthropic-messages");
  EXPECT_EQ(anthropic->base_url, "https://api.anthropic.com");
  EXPECT_EQ(anthropic->api_key_env, "ANTHROPIC_API_KEY");
  const ProviderSettings* ollama = FindBuiltinProvider("ollama");
  EXPECT_EQ(ollama->base_url, "http://127.0.0.1:11434/v1");
  EXPECT_TRUE(ollama->api_key_env.empty());
  EXPECT_EQ(FindBuiltinProvider("openrouter")->api_key_env, "OPENROUTER_API_KEY");
}

TEST(CatalogTest, ModelsHavePricesAndLimits) {
  const ProviderSettings* openai = FindBuiltinProvider("openai");
  for (const char* id : {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "o3", "o4-mini"}) {
    const ModelInfo* m = FindModel(*openai, id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_GT(m->input_price, 0) << id;
    EXPECT_GT(m->output_price, m->input_price) << id;
    EXPECT_GT(m->context_window, 0) << id;
  }
  EXPECT_DOUBLE_EQ(FindModel(*openai, "gpt-4o")->input_price, 2.5);
  EXPECT_TRUE(FindModel(*openai, "o3")->reasoning);
  const ProviderSettings* anthropic = FindBuiltinProvider("anthropic");
  for (const char* id : {"claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"}) {
    const ModelInfo* m = FindModel(*anthropic, id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_GT(m->cache_write_price, m->input_price) << id;
    EXPECT_TRUE(m->images) << id;
  }
  EXPECT_DOUBLE_EQ(FindModel(*anthropic, "claude-sonnet-4-5")->output_price, 15.0);
}

TEST(CatalogTest, SpecModelsFirstThenBuiltinThenNone) {
  ProviderSettings s = *FindBuiltinProvider("openai");
  s.models.clear();
  EXPECT_NE(FindModel(s, "gpt-4o"), nullptr);  // falls back to the built-in entry
  ModelInfo custom;
  custom.id = "gpt-4o";
  custom.input_price = 1;
  s.models = {custom};
  EXPECT_DOUBLE_EQ(FindModel(s, "gpt-4o")->input_price, 1);
  EXPECT_EQ(FindModel(s, "my-finetune"), nullptr);
  ModelInfo unknown = UnknownModelInfo("my-finetune");
  EXPECT_EQ(unknown.id, "my-finetune");
  EXPECT_EQ(unknown.input_price, 0);
  EXPECT_FALSE(unknown.images);
}

}  // namespace
}  // namespace lousho::config

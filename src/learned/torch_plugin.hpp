// Internal: the libtorch plugin. Every use of libtorch lives in libmcpclass_torch.so, a module
// dlopen'ed (RTLD_LOCAL, never closed) the first time something needs it, so a program that never
// runs a TorchScript model never maps libtorch (~160 MB of RSS). The module exports one function,
// mcpclass_torch_plugin_v1(), returning this table; it is built by the same compiler against the
// same libstdc++ as the library, so C++ types and exceptions (ClassifyError) cross it as usual.
#pragma once

#include "checkpoint/safetensors.hpp"
#include "learned/head_model.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "tokenizers/sentencepiece_shim_path.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::learned::detail {

struct TorchPlugin {
  /// kTorchPluginVersion of the module; the library refuses any other.
  int version = 0;
  /// A TorchScript text model behind a sentencepiece tokenizer (torch_text_model.hpp).
  std::shared_ptr<const SentenceEncoder> (*load_text_model)(const EncoderOptions& options,
                                                            bool normalize,
                                                            std::string_view what) = nullptr;
  /// learned_classifier.hpp's train_head, export_sequence_classifier; embedding_encoder.hpp's
  /// convert_use_lite.
  HeadTrainingReport (*train_head)(const classify::CategorySet& categories,
                                   const LearnedSettings& settings,
                                   const std::vector<LabelledExample>& examples,
                                   const std::string& head_path, const HeadTrainingOptions& options,
                                   const LearnedProgress& progress) = nullptr;
  void (*export_sequence_classifier)(const LearnedSettings& settings,
                                     const std::string& path) = nullptr;
  void (*convert_use_lite)(const std::string& package_dist_dir,
                           const std::string& out_dir) = nullptr;
  /// The named parameters of a TorchScript head file (w0, b0, …, lex_w, lex_b, lex_idf), unchecked
  /// (head_model.hpp checks them). Throws ClassifyError.
  std::map<std::string, checkpoint::SafeTensor> (*read_torchscript_head)(const std::string& path) =
      nullptr;
  /// Writes `head` as a TorchScript head module (forward(e) = dense logits), atomically.
  void (*write_torchscript_head)(const HeadModel& head, const std::string& path) = nullptr;
};

inline constexpr int kTorchPluginVersion = 1;

/// The plugin's table: loaded on first use (thread-safe) from
/// current_module_search(RuntimeModule::torch_plugin). Throws ClassifyError naming every path
/// tried and the loader's reason; a later call tries again. Inside the plugin itself this is the
/// plugin's own table (torch_plugin_entry.cpp defines it, so the loader is never linked there).
const TorchPlugin& torch_plugin();

/// Loads the plugin found by `search` without caching it (tests). Throws like torch_plugin().
const TorchPlugin& load_torch_plugin(const tokenizers::ModuleSearch& search);

}  // namespace mcpclass::learned::detail

/// The module's entry point.
extern "C" const mcpclass::learned::detail::TorchPlugin* mcpclass_torch_plugin_v1();

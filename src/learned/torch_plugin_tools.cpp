// The libtorch tools of the public API, run in the libtorch plugin (torch_plugin.hpp). The plugin
// defines these functions itself, so nothing it uses may be added here: the linker would then pull
// this file into the plugin and report the duplicates.
#include "learned/torch_plugin.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

namespace mcpclass::learned {

using classify::CategorySet;

HeadTrainingReport train_head(const CategorySet& categories, const LearnedSettings& settings,
                              const std::vector<LabelledExample>& examples,
                              const std::string& head_path, const HeadTrainingOptions& options,
                              const LearnedProgress& progress) {
  return detail::torch_plugin().train_head(categories, settings, examples, head_path, options,
                                           progress);
}

void export_sequence_classifier(const LearnedSettings& settings, const std::string& path) {
  detail::torch_plugin().export_sequence_classifier(settings, path);
}

void convert_use_lite(const std::string& package_dist_dir, const std::string& out_dir) {
  detail::torch_plugin().convert_use_lite(package_dist_dir, out_dir);
}

}  // namespace mcpclass::learned

// Planted for layering.check_names_wrong_namespace: checked as a file of the remote layer, it
// defines remote code in classify's namespace (what src/remote did before it had its own).
#pragma once

namespace mcpclass::classify {
struct Classifier;  // a forward declaration alone would be allowed

int remote_call_count();
}  // namespace mcpclass::classify

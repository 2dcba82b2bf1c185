// libmcpclass_spm.so: the sentencepiece shim (see sentencepiece_shim.h). Stateless apart from the
// model objects it hands out; every entry point is reentrant and catches everything.
#include "tokenizers/sentencepiece_shim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#define MCPCLASS_SPM_EXPORT extern "C" __attribute__((visibility("default")))

struct mcpclass_spm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

void report(mcpclass_spm_bytes_sink sink, void* user, const std::string& message) {
  if (sink != nullptr) sink(user, message.data(), message.size());
}

// The C boundary of every entry point: `body` returns 0 or -1; no exception crosses, and any
// failure is reported through `error`.
template <class Body>
int guarded(mcpclass_spm_bytes_sink error, void* user, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    report(error, user, e.what());
  } catch (...) {
    report(error, user, "unknown sentencepiece failure");
  }
  return -1;
}

// Reads one length-delimited field of a serialized message (protobuf wire format).
bool find_bytes_field(const std::string& message, std::uint32_t field, std::string* out) {
  std::size_t pos = 0;
  auto varint = [&](std::uint64_t* value) {
    *value = 0;
    for (int shift = 0; pos < message.size() && shift < 64; shift += 7) {
      const auto byte = static_cast<unsigned char>(message[pos++]);
      *value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  while (pos < message.size()) {
    std::uint64_t key = 0;
    std::uint64_t length = 0;
    if (!varint(&key)) return false;
    switch (key & 7) {
      case 0:
        if (!varint(&length)) return false;
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2:
        if (!varint(&length) || length > message.size() - pos) return false;
        if ((key >> 3) == field) {
          *out = message.substr(pos, length);
          return true;
        }
        pos += length;
        break;
      default:
        return false;
    }
  }
  return false;
}

// A few lines of text for the throw-away training run that produces the normalizer.
class TinyCorpus : public sentencepiece::SentenceIterator {
 public:
  bool done() const override { return index_ >= lines_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return lines_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::vector<std::string> lines_{"a b c d e f g h i j k l m n o p q r s t u v w x y z",
                                  "the quick brown fox jumps over the lazy dog"};
  std::size_t index_ = 0;
};

}  // namespace

MCPCLASS_SPM_EXPORT int mcpclass_spm_load(const char* model, size_t model_size, mcpclass_spm** out,
                                          mcpclass_spm_bytes_sink error, void* user) {
  return guarded(error, user, [&] {
    auto spm = std::make_unique<mcpclass_spm>();
    const auto status = spm->processor.LoadFromSerializedProto(std::string(model, model_size));
    if (!status.ok()) {
      report(error, user, status.ToString());
      return -1;
    }
    *out = spm.release();
    return 0;
  });
}

MCPCLASS_SPM_EXPORT int mcpclass_spm_encode(const mcpclass_spm* spm, const char* text, size_t size,
                                            mcpclass_spm_ids_sink ids,
                                            mcpclass_spm_bytes_sink error, void* user) {
  return guarded(error, user, [&] {
    std::vector<int> out;
    const auto status = spm->processor.Encode(std::string_view(text, size), &out);
    if (!status.ok()) {
      report(error, user, status.ToString());
      return -1;
    }
    const std::vector<int32_t> ids32(out.begin(), out.end());
    ids(user, ids32.data(), ids32.size());
    return 0;
  });
}

MCPCLASS_SPM_EXPORT int mcpclass_spm_piece_count(const mcpclass_spm* spm) {
  return spm->processor.GetPieceSize();
}

MCPCLASS_SPM_EXPORT void mcpclass_spm_free(mcpclass_spm* spm) {
  delete spm;
}

MCPCLASS_SPM_EXPORT int mcpclass_spm_normalizer(const char* rule_name, mcpclass_spm_bytes_sink spec,
                                                mcpclass_spm_bytes_sink error, void* user) {
  return guarded(error, user, [&] {
    // The trainer is the only public way to reach sentencepiece's precompiled character maps:
    // train a throw-away model in memory and keep its NormalizerSpec (field 3 of ModelProto).
    TinyCorpus corpus;
    std::string model;
    const std::unordered_map<std::string, std::string> args{
        {"model_type", "char"},        {"vocab_size", "30"}, {"normalization_rule_name", rule_name},
        {"hard_vocab_limit", "false"}, {"minloglevel", "2"}, {"num_threads", "1"}};
    const auto status = sentencepiece::SentencePieceTrainer::Train(args, &corpus, &model);
    if (!status.ok()) {
      report(error, user, status.ToString());
      return -1;
    }
    std::string normalizer;
    if (!find_bytes_field(model, 3, &normalizer)) {
      report(error, user, "the trained model has no normalizer_spec");
      return -1;
    }
    spec(user, normalizer.data(), normalizer.size());
    return 0;
  });
}

// Reads a Hugging Face tokenizer.json into an HfTokenizer.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tokenize/hf_tokenizer.h"

namespace stagegate::tokenize {

using json = nlohmann::json;

namespace {

// Ids at or above this are refused: no vocabulary is this large, and tokens_ is indexed by id.
constexpr size_t kMaxTokenId = size_t{1} << 24;

// GPT-2's split, which a ByteLevel pre-tokenizer with use_regex applies.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Built by appending: GCC 12 at -O3 warns (-Wrestrict) about "'" + std::string(text).
std::string Quoted(std::string_view text) {
  std::string quoted(1, '\'');
  quoted.append(text);
  quoted += '\'';
  return quoted;
}

std::string TypeOf(const json& node) {
  const auto it = node.find("type");
  return it != node.end() && it->is_string() ? it->get<std::string>() : "";
}

bool BoolOr(const json& node, const char* key, bool otherwise) {
  const auto it = node.find(key);
  return it != node.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

}  // namespace

class HfLoader {
 public:
  explicit HfLoader(HfTokenizer& tokenizer) : t_(tokenizer) {}

  Status Read(const json& root) {
    if (!root.is_object()) return Status::InvalidInput("the top level is not a JSON object");
    const json null;
    const auto field = [&](const char* key) -> const json& {
      const auto it = root.find(key);
      return it == root.end() ? null : *it;
    };
    if (!field("model").is_object()) return Status::InvalidInput("no \"model\" object");
    // Ids are dense: each is below the number of tokens, so that a few bytes of JSON cannot make
    // tokens_ (indexed by id) large.
    const json& vocab = field("model").contains("vocab") ? field("model")["vocab"] : null;
    id_limit_ = std::min(kMaxTokenId,
                         (vocab.is_object() ? vocab.size() : 0) +
                             (field("added_tokens").is_array() ? field("added_tokens").size() : 0));
    SG_RETURN_IF_ERROR(ReadVocab(field("model")));
    SG_RETURN_IF_ERROR(ReadAdded(field("added_tokens")));
    SG_RETURN_IF_ERROR(ReadNormalizer(field("normalizer"), "normalizer"));
    SG_RETURN_IF_ERROR(ReadPreTokenizer(field("pre_tokenizer"), "pre_tokenizer"));
    ReadDecoder(field("decoder"));
    if (byte_level_ || TypeOf(field("decoder")) == "ByteLevel")
      t_.family_ = HfTokenizer::Family::kByteLevel;
    else
      t_.family_ = HfTokenizer::Family::kSentencePiece;
    SG_RETURN_IF_ERROR(ReadByteTokens(field("model")));
    return ReadMerges(field("model"));
  }

 private:
  Status ReadVocab(const json& model) {
    if (const std::string type = TypeOf(model);
        type != "BPE" && !(type.empty() && model.contains("merges")))
      return Status::InvalidInput("model type " + Quoted(type) + " is not supported (only BPE is)");
    const auto vocab = model.find("vocab");
    if (vocab == model.end() || !vocab->is_object() || vocab->empty())
      return Status::InvalidInput("model.vocab is missing or not an object of token ids");
    for (const auto& [token, id] : vocab->items())
      SG_RETURN_IF_ERROR(AddToken(token, id, "model.vocab[" + Quoted(token) + "]", false));
    t_.vocab_size_ = vocab->size();
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      const auto it = model.find(key);
      if (it != model.end() && it->is_string() && !it->get<std::string>().empty())
        return Status::InvalidInput(std::string("model.") + key + " is not supported");
    }
    t_.ignore_merges_ = BoolOr(model, "ignore_merges", false);
    t_.fuse_unk_ = BoolOr(model, "fuse_unk", false);
    if (const auto unk = model.find("unk_token"); unk != model.end() && unk->is_string()) {
      const auto it = t_.vocab_.find(unk->get<std::string>());
      if (it == t_.vocab_.end())
        return Status::InvalidInput("model.unk_token " + Quoted(unk->get<std::string>()) +
                                    " is not in the vocab");
      t_.unk_id_ = it->second;
    }
    return Status::Ok();
  }

  Status AddToken(const std::string& token, const json& id, const std::string& where, bool added) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        static_cast<size_t>(id.get<int64_t>()) >= id_limit_)
      return Status::InvalidInput(where + ": the id is not an integer below " +
                                  std::to_string(id_limit_) + ", the number of tokens");
    const auto index = static_cast<size_t>(id.get<int64_t>());
    if (index >= t_.tokens_.size()) {
      t_.tokens_.resize(index + 1);
      t_.is_added_.resize(index + 1);
    }
    if (!added) {
      if (!t_.tokens_[index].empty())
        return Status::InvalidInput(where + ": id " + std::to_string(index) +
                                    " is already the id of " + Quoted(t_.tokens_[index]));
      t_.vocab_.emplace(token, static_cast<int32_t>(index));
    }
    t_.tokens_[index] = token;
    t_.is_added_[index] = added;
    return Status::Ok();
  }

  Status ReadAdded(const json& added) {
    t_.added_starts_.fill(false);
    if (added.is_null()) return Status::Ok();
    if (!added.is_array()) return Status::InvalidInput("added_tokens is not an array");
    for (size_t i = 0; i < added.size(); ++i) {
      const std::string where = "added_tokens[" + std::to_string(i) + "]";
      const json& entry = added[i];
      if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string() ||
          entry["content"].get<std::string>().empty() || !entry.contains("id"))
        return Status::InvalidInput(where + ": not an object with a content and an id");
      const std::string content = entry["content"].get<std::string>();
      SG_RETURN_IF_ERROR(AddToken(content, entry["id"], where, true));
      t_.added_.push_back({content, entry["id"].get<int32_t>()});
      t_.added_starts_[static_cast<uint8_t>(content[0])] = true;
    }
    std::stable_sort(t_.added_.begin(), t_.added_.end(), [](const auto& a, const auto& b) {
      return a.content.size() > b.content.size();
    });
    return Status::Ok();
  }

  Status ReadNormalizer(const json& node, const std::string& where) {
    if (node.is_null()) return Status::Ok();
    const std::string type = TypeOf(node);
    if (type == "NFC") {
      if (!t_.prepend_.empty() || !t_.replacements_.empty())
        return Status::InvalidInput(where + ": an NFC after another normalizer is not supported");
      t_.nfc_ = true;
      return Status::Ok();
    }
    if (type == "Sequence" && node.contains("normalizers") && node["normalizers"].is_array()) {
      for (size_t i = 0; i < node["normalizers"].size(); ++i)
        SG_RETURN_IF_ERROR(ReadNormalizer(node["normalizers"][i],
                                          where + ".normalizers[" + std::to_string(i) + "]"));
      return Status::Ok();
    }
    if (type == "Prepend" && node.contains("prepend") && node["prepend"].is_string()) {
      // Prepend runs first, so it must come before any Replace.
      if (!t_.prepend_.empty() || !t_.replacements_.empty())
        return Status::InvalidInput(where +
                                    ": a Prepend after another normalizer is not supported");
      t_.prepend_ = node["prepend"].get<std::string>();
      return Status::Ok();
    }
    if (type == "Replace" && node.contains("pattern") && node["pattern"].is_object() &&
        node["pattern"].contains("String") && node["pattern"]["String"].is_string() &&
        !node["pattern"]["String"].get<std::string>().empty() && node.contains("content") &&
        node["content"].is_string()) {
      t_.replacements_.push_back(
          {node["pattern"]["String"].get<std::string>(), node["content"].get<std::string>()});
      return Status::Ok();
    }
    return Status::InvalidInput(where + ": normalizer " + Quoted(type) +
                                " is not supported (NFC, Prepend, Replace of a string and "
                                "Sequence are)");
  }

  Status AddSplit(std::string_view pattern, const std::string& where) {
    Result<SplitRegex> regex = SplitRegex::Compile(pattern);
    if (!regex.ok()) return regex.status().WithContext(where);
    t_.splits_.push_back(std::move(regex).value());
    return Status::Ok();
  }

  Status ReadPreTokenizer(const json& node, const std::string& where) {
    if (node.is_null()) return Status::Ok();
    const std::string type = TypeOf(node);
    if (type == "Sequence" && node.contains("pretokenizers") && node["pretokenizers"].is_array()) {
      for (size_t i = 0; i < node["pretokenizers"].size(); ++i)
        SG_RETURN_IF_ERROR(ReadPreTokenizer(node["pretokenizers"][i],
                                            where + ".pretokenizers[" + std::to_string(i) + "]"));
      return Status::Ok();
    }
    if (type == "ByteLevel") {
      byte_level_ = true;
      if (BoolOr(node, "add_prefix_space", false)) {
        if (!t_.splits_.empty())
          return Status::InvalidInput(where + ": add_prefix_space after a split is not supported");
        t_.add_prefix_space_ = true;
      }
      if (BoolOr(node, "use_regex", true)) return AddSplit(kGpt2Pattern, where);
      return Status::Ok();
    }
    if (type == "Metaspace") return ReadMetaspace(node, where);
    if (type == "Digits")
      return AddSplit(BoolOr(node, "individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", where);
    if (type == "Split") {
      const auto pattern = node.find("pattern");
      if (pattern == node.end() || !pattern->is_object() || !pattern->contains("Regex") ||
          !(*pattern)["Regex"].is_string())
        return Status::InvalidInput(where + ": a Split needs a pattern {\"Regex\": ...}");
      if (!node.contains("behavior") || node["behavior"] != "Isolated" ||
          BoolOr(node, "invert", false))
        return Status::InvalidInput(where +
                                    ": only a Split with behavior Isolated, not inverted, is "
                                    "supported");
      return AddSplit((*pattern)["Regex"].get<std::string>(), where);
    }
    return Status::InvalidInput(
        where + ": pre-tokenizer " + Quoted(type) +
        " is not supported (ByteLevel, Split, Digits, Metaspace and Sequence are)");
  }

  Status ReadMetaspace(const json& node, const std::string& where) {
    HfTokenizer::Metaspace& metaspace = t_.metaspace_;
    metaspace.enabled = true;
    metaspace.replacement = node.value("replacement", std::string("\xE2\x96\x81"));
    if (metaspace.replacement.empty())
      return Status::InvalidInput(where + ": the Metaspace replacement is empty");
    metaspace.split = BoolOr(node, "split", true);
    // prepend_scheme, when present, wins over the older add_prefix_space.
    using Prepend = HfTokenizer::Metaspace::Prepend;
    const std::string scheme = node.contains("prepend_scheme") && node["prepend_scheme"].is_string()
                                   ? node["prepend_scheme"].get<std::string>()
                               : BoolOr(node, "add_prefix_space", true) ? "always"
                                                                        : "never";
    if (scheme == "always")
      metaspace.prepend = Prepend::kAlways;
    else if (scheme == "first")
      metaspace.prepend = Prepend::kFirst;
    else if (scheme == "never")
      metaspace.prepend = Prepend::kNever;
    else
      return Status::InvalidInput(where + ": prepend_scheme " + Quoted(scheme) +
                                  " is not always, first or never");
    return Status::Ok();
  }

  void ReadDecoder(const json& node) {
    const std::string type = TypeOf(node);
    if (type == "Sequence" && node.contains("decoders") && node["decoders"].is_array()) {
      for (const json& decoder : node["decoders"])
        ReadDecoder(decoder);
    } else if (type == "Strip" && node.contains("start") && node["start"].is_number_unsigned() &&
               node.value("content", "") == " ") {
      t_.decode_strip_spaces_ = node["start"].get<size_t>();
    } else if (type == "Metaspace") {
      // It takes the space of the replacement the pre-tokenizer put first off again.
      const bool prepends = node.contains("prepend_scheme") && node["prepend_scheme"].is_string()
                                ? node["prepend_scheme"] != "never"
                                : BoolOr(node, "add_prefix_space", true);
      t_.decode_strip_spaces_ = prepends ? 1 : 0;
    }
  }

  Status ReadByteTokens(const json& model) {
    t_.byte_ids_.fill(-1);
    const bool byte_level = t_.family_ == HfTokenizer::Family::kByteLevel;
    if (!byte_level && !BoolOr(model, "byte_fallback", false)) return Status::Ok();
    for (int byte = 0; byte < 256; ++byte) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      const std::string token = byte_level ? t_.alphabet_.CharOf(byte) : name;
      const auto it = t_.vocab_.find(token);
      if (it != t_.vocab_.end()) {
        t_.byte_ids_[byte] = it->second;
      } else if (byte_level) {
        return Status::InvalidInput("model.vocab has no token for the byte " +
                                    std::string(name).substr(1, 4) + " (" + Quoted(token) +
                                    "), which a byte-level vocabulary needs");
      }
    }
    return Status::Ok();
  }

  Status ReadMerges(const json& model) {
    const auto merges = model.find("merges");
    if (merges == model.end() || !merges->is_array())
      return Status::InvalidInput("model.merges is missing or not an array");
    for (size_t i = 0; i < merges->size(); ++i) {
      const std::string where = "model.merges[" + std::to_string(i) + "]";
      const json& merge = (*merges)[i];
      std::string left;
      std::string right;
      if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        const size_t space = text.find(' ');
        if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
          return Status::InvalidInput(where + ": " + Quoted(text) +
                                      " is not two tokens separated by one space");
        left = text.substr(0, space);
        right = text.substr(space + 1);
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                 merge[1].is_string()) {
        left = merge[0].get<std::string>();
        right = merge[1].get<std::string>();
      } else {
        return Status::InvalidInput(where + ": not a string \"a b\" or a pair [\"a\", \"b\"]");
      }
      int32_t ids[3];
      const std::string names[3] = {left, right, left + right};
      for (int k = 0; k < 3; ++k) {
        const auto it = t_.vocab_.find(names[k]);
        if (it == t_.vocab_.end())
          return Status::InvalidInput(where + ": " + Quoted(names[k]) + " is not in the vocab");
        ids[k] = it->second;
      }
      t_.merges_.Add(ids[0], ids[1], ids[2]);
    }
    return Status::Ok();
  }

  HfTokenizer& t_;
  size_t id_limit_ = 0;
  bool byte_level_ = false;
};

Result<std::unique_ptr<Tokenizer>> HfTokenizer::FromJson(const std::string& text) {
  std::unique_ptr<HfTokenizer> tokenizer(new HfTokenizer());
  try {
    const json root = json::parse(text);
    SG_RETURN_IF_ERROR(HfLoader(*tokenizer).Read(root));
  } catch (const json::parse_error& error) {
    std::string what = error.what();
    if (const size_t bracket = what.find("] "); bracket != std::string::npos)
      what.erase(0, bracket + 2);
    return Status::InvalidInput("not valid JSON: " + what);
  } catch (const json::exception& error) {
    return Status::InvalidInput(std::string("unexpected JSON: ") + error.what());
  }
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace stagegate::tokenize

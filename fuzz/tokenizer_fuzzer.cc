// A tokenizer.json on any bytes (`profile --tokenizer`, `input.tokenizer`): Tokenizer::Load
// either refuses it with a message that starts with the path, or gives a tokenizer whose Count of
// a text is the size of its Encode, and whose Decode takes any ids, known or not. The texts
// encoded are a few fixed ones and the input itself (any bytes, ill-formed UTF-8 included).
// SentencePiece .model files are libsentencepiece's own parser, not fuzzed here.

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "tokenize/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stagegate::fuzz::Fail;
  const std::string_view input = stagegate::fuzz::AsText(data, size);
  const std::string path = stagegate::fuzz::WriteScratchFile("tokenizer.json", input);
  auto loaded = stagegate::tokenize::Tokenizer::Load(path);
  if (!loaded.ok()) {
    if (!loaded.status().message().starts_with(path))
      Fail("a refusal that does not start with the path: " + loaded.status().message());
    return 0;
  }
  const stagegate::tokenize::Tokenizer& tokenizer = **loaded;
  if (tokenizer.Describe().empty()) Fail("a tokenizer that does not say what it is");
  for (const std::string_view text :
       {std::string_view(), std::string_view("Hello, world! 123"),
        std::string_view("<|im_end|> <s></s> \xF0\x9F\x99\x82 \xFF\xFE caf\x65\xCC\x81"),
        input.substr(0, 4096)}) {
    const std::vector<int32_t> ids = tokenizer.Encode(text);
    if (tokenizer.Count(text) != static_cast<int64_t>(ids.size()))
      Fail("Count differs from the size of Encode");
    if (text.empty() && !ids.empty()) Fail("the empty text has tokens");
    std::vector<int32_t> odd = ids;
    odd.insert(odd.end(), {-1, 0, 1 << 30});
    (void)tokenizer.Decode(odd);
  }
  return 0;
}

// Tokens per second of stagegate's tokenizers on one core: the corpus documents encoded `rounds`
// times by each tokenizer named on the command line. bench/tokenize_bench.sh builds and runs it.
// Usage: tokenize_bench ROUNDS TEXT_FILE TOKENIZER...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/files.h"
#include "tokenize/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: tokenize_bench ROUNDS TEXT_FILE TOKENIZER...\n");
    return 2;
  }
  const int rounds = std::atoi(argv[1]);
  const auto text = stagegate::ReadFile(argv[2]);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().message().c_str());
    return 1;
  }
  for (int i = 3; i < argc; ++i) {
    const auto load_start = std::chrono::steady_clock::now();
    auto tokenizer = stagegate::tokenize::Tokenizer::Load(argv[i]);
    if (!tokenizer.ok()) {
      std::fprintf(stderr, "%s\n", tokenizer.status().message().c_str());
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    for (int round = 0; round < rounds; ++round)
      tokens += (*tokenizer)->Count(*text);
    const auto end = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(end - start).count();
    const double load = std::chrono::duration<double>(start - load_start).count();
    std::printf("%s\t%s\t%lld tokens a round\t%.0f tokens/s\t%.1f MB/s\tloaded in %.2f s\n",
                argv[i], (*tokenizer)->Describe().c_str(), static_cast<long long>(tokens / rounds),
                tokens / seconds, text->size() * rounds / seconds / 1e6, load);
  }
  return 0;
}

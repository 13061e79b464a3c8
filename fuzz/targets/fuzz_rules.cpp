// libFuzzer target: a rule file (YAML) loaded, validated and compiled (load_rules_from_string),
// as `graphfuse check` does. A rejected file (graphfuse::Error) is fine; any other exception
// counts with GRAPHFUSE_FUZZ_STRICT=1 (fuzz_common.h). `include:` names are resolved relative to
// the current directory, so an input cannot reach files outside what the run can read anyway.
#include "fuzz_common.h"
#include "graphfuse/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::guarded("load_rules_from_string", [&] {
    graphfuse::RuleSet rules = graphfuse::load_rules_from_string(fuzz::bytes(data, size), "<fuzz>.yaml");
    (void)rules.max_depth();
  });
  return 0;
}

// Model-sized rule-test expectations: op counts, per-rule application counts, ops that
// must come out untouched, and constants compared without their data.
#pragma once

#include <string>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "testing/rule_test_file.h"

namespace graphfuse::testing {

/// What the case's expect_counts, expect_applied and expect_unchanged_ops say that the run
/// did not do, one indented line each ("  expect_counts: Conv: expected 0, got 2"); "" when
/// all hold.
std::string check_expected_counts(const RuleTestCase& tc, const Graph& input, const Graph& actual,
                                  const RewriteReport& report);

/// Drops the data of every constant tensor (keeping dtype and shape), so two graphs
/// compare by structure alone and a written expectation holds no weights.
void elide_weights(Graph& g);

}  // namespace graphfuse::testing

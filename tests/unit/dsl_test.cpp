// The Spirit X3 grammar: every construct's AST and positions, error messages with
// line:column, and robustness on arbitrary input.
#include <gtest/gtest.h>

#include <random>

#include "dsl/parser.h"

using namespace graphfuse;
using namespace graphfuse::dsl;

namespace {

TextOrigin origin(std::string_view text, std::string file = "t.graph") {
  TextOrigin o;
  o.file = std::move(file);
  o.file_lines = split_lines(text);
  return o;
}

Program parse(std::string_view text) { return parse_program(text, origin(text)); }

/// The Error a text gives, as "line:col: message".
std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return std::to_string(e.loc().line) + ":" + std::to_string(e.loc().column) + ": " +
           e.message();
  }
  return "no error";
}

const Call& call_of(const Expr& e) {
  EXPECT_EQ(e.kind, Expr::Kind::Call);
  return *e.call;
}

template <class T>
const T& lit(const Literal& l) {
  EXPECT_TRUE(std::holds_alternative<T>(l.value));
  return std::get<T>(l.value);
}

void expect_pos(Pos p, int line, int column) {
  EXPECT_EQ(p.line, line);
  EXPECT_EQ(p.column, column);
}

}  // namespace

TEST(Dsl, InputOutputAndBind) {
  Program p = parse(
      "input x, y  # graph inputs\n"
      "\n"
      "conv = Conv2D(x, w) {strides = [1, 1], padding = \"SAME\"}\n"
      "output conv, split:1\n");
  ASSERT_EQ(p.statements.size(), 3u);
  const Statement& in = p.statements[0];
  EXPECT_EQ(in.kind, Statement::Kind::Input);
  ASSERT_EQ(in.targets.size(), 2u);
  EXPECT_EQ(in.targets[1].name, "y");
  expect_pos(in.targets[1].pos, 1, 10);

  const Statement& bind = p.statements[1];
  EXPECT_EQ(bind.kind, Statement::Kind::Bind);
  expect_pos(bind.pos, 3, 1);
  ASSERT_EQ(bind.targets.size(), 1u);
  EXPECT_EQ(bind.targets[0].name, "conv");
  ASSERT_EQ(bind.values.size(), 1u);
  const Call& c = call_of(bind.values[0]);
  EXPECT_EQ(c.ops, std::vector<std::string>{"Conv2D"});
  expect_pos(c.pos, 3, 8);
  ASSERT_EQ(c.args.size(), 2u);
  EXPECT_EQ(c.args[1].name, "w");
  expect_pos(c.args[1].pos, 3, 18);
  ASSERT_EQ(c.attrs.size(), 2u);
  EXPECT_EQ(c.attrs[0].kind, AttrItem::Kind::Assign);
  EXPECT_EQ(c.attrs[0].key, "strides");
  expect_pos(c.attrs[0].pos, 3, 22);
  const auto& strides = lit<std::vector<Literal>>(std::get<Literal>(c.attrs[0].value.value));
  ASSERT_EQ(strides.size(), 2u);
  EXPECT_EQ(lit<std::int64_t>(strides[1]), 1);
  expect_pos(strides[1].pos, 3, 36);
  EXPECT_EQ(lit<std::string>(std::get<Literal>(c.attrs[1].value.value)), "SAME");
  expect_pos(c.attrs[1].value.pos, 3, 50);

  const Statement& out = p.statements[2];
  EXPECT_EQ(out.kind, Statement::Kind::Output);
  ASSERT_EQ(out.values.size(), 2u);
  EXPECT_EQ(out.values[1].name, "split");
  EXPECT_EQ(out.values[1].port, 1);
  expect_pos(out.values[1].pos, 4, 14);
}

TEST(Dsl, MultiTargetsRootsAndNodeIds) {
  Program p = parse("a, s:1 = Split(x) {axis = 0} as `s/0`\nReLU(bias)\nc1, c2\n");
  ASSERT_EQ(p.statements.size(), 3u);
  const Statement& s = p.statements[0];
  ASSERT_EQ(s.targets.size(), 2u);
  EXPECT_EQ(s.targets[1].name, "s");
  EXPECT_EQ(s.targets[1].port, 1);
  EXPECT_EQ(s.node_id, "s/0");
  expect_pos(s.node_id_pos, 1, 33);
  EXPECT_EQ(p.statements[1].kind, Statement::Kind::Expr);
  EXPECT_EQ(call_of(p.statements[1].values[0]).ops[0], "ReLU");
  EXPECT_EQ(p.statements[2].kind, Statement::Kind::Expr);
  ASSERT_EQ(p.statements[2].values.size(), 2u);
  expect_pos(p.statements[2].values[1].pos, 3, 5);
}

TEST(Dsl, NamesWildcardsVariadicsAndQuoting) {
  Program p = parse("r = Concat(_, xs..., `/layer1/Conv_output_0`, `_`, `a\\`b`:2)\n");
  const Call& c = call_of(p.statements[0].values[0]);
  ASSERT_EQ(c.args.size(), 5u);
  EXPECT_EQ(c.args[0].name, "_");
  EXPECT_FALSE(c.args[0].quoted);
  EXPECT_TRUE(c.args[1].variadic);
  EXPECT_EQ(c.args[1].name, "xs");
  EXPECT_EQ(c.args[2].name, "/layer1/Conv_output_0");
  EXPECT_TRUE(c.args[2].quoted);
  EXPECT_EQ(c.args[3].name, "_");
  EXPECT_TRUE(c.args[3].quoted);
  EXPECT_EQ(c.args[4].name, "a`b");
  EXPECT_EQ(c.args[4].port, 2);
}

TEST(Dsl, OpsDottedAnyAndAlternatives) {
  Program p = parse("a = com.microsoft.FusedConv(x)\nb = *(a)\nRelu|Relu6|Sigmoid(b)\n");
  EXPECT_EQ(call_of(p.statements[0].values[0]).ops[0], "com.microsoft.FusedConv");
  EXPECT_EQ(call_of(p.statements[1].values[0]).ops[0], "*");
  EXPECT_EQ(call_of(p.statements[2].values[0]).ops,
            (std::vector<std::string>{"Relu", "Relu6", "Sigmoid"}));
}

TEST(Dsl, Literals) {
  Program p = parse(
      "f(3, -2, 1.0, 1e-5, -0.5, \"a\\\"b\\\\c\\n\", true, false, [1, [2, 3]], [],\n"
      "  tensor(float32, [2, 2], [1.0, 2.0, 3.0, 4.0]), tensor(float32, [64]),\n"
      "  tensor(int64, [1], [9223372036854775807]), inf, -inf)\n");
  const Call& c = call_of(p.statements[0].values[0]);
  ASSERT_EQ(c.args.size(), 15u);
  auto L = [&](int i) -> const Literal& {
    EXPECT_EQ(c.args[i].kind, Expr::Kind::Literal);
    return c.args[i].literal;
  };
  EXPECT_EQ(lit<std::int64_t>(L(0)), 3);
  EXPECT_EQ(lit<std::int64_t>(L(1)), -2);
  EXPECT_EQ(lit<double>(L(2)), 1.0);
  EXPECT_EQ(lit<double>(L(3)), 1e-5);
  EXPECT_EQ(lit<double>(L(4)), -0.5);
  EXPECT_EQ(lit<std::string>(L(5)), "a\"b\\c\n");
  EXPECT_EQ(lit<bool>(L(6)), true);
  EXPECT_EQ(lit<bool>(L(7)), false);
  const auto& nested = lit<std::vector<Literal>>(L(8));
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(lit<std::vector<Literal>>(nested[1]).size(), 2u);
  EXPECT_TRUE(lit<std::vector<Literal>>(L(9)).empty());
  const auto& t = lit<TensorLiteral>(L(10));
  EXPECT_EQ(t.dtype, "float32");
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(t.has_data);
  EXPECT_EQ(t.data, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_TRUE(t.int_data.empty());
  const auto& shape_only = lit<TensorLiteral>(L(11));
  EXPECT_FALSE(shape_only.has_data);
  EXPECT_EQ(shape_only.shape, std::vector<std::int64_t>{64});
  EXPECT_EQ(lit<TensorLiteral>(L(12)).int_data,
            std::vector<std::int64_t>{9223372036854775807LL});
  EXPECT_TRUE(std::isinf(lit<double>(L(13))));
  EXPECT_LT(lit<double>(L(14)), 0);
  expect_pos(L(10).pos, 2, 3);
  expect_pos(L(14).pos, 3, 51);
}

TEST(Dsl, AttrItems) {
  Program p = parse(
      "F(x) {...conv, k == 3, !group, pad in [\"SAME\", \"VALID\"], act = a.op_type,\n"
      "      n = rank(x), w <= 2, m = y}\n");
  const auto& items = call_of(p.statements[0].values[0]).attrs;
  ASSERT_EQ(items.size(), 8u);
  EXPECT_EQ(items[0].kind, AttrItem::Kind::Spread);
  EXPECT_EQ(items[0].key, "conv");
  EXPECT_EQ(items[1].kind, AttrItem::Kind::Constraint);
  EXPECT_EQ(items[1].op, "==");
  EXPECT_EQ(items[2].kind, AttrItem::Kind::Absent);
  EXPECT_EQ(items[2].key, "group");
  EXPECT_EQ(items[3].op, "in");
  const auto& ref = std::get<AttrRef>(items[4].value.value);
  EXPECT_EQ(ref.node, "a");
  EXPECT_EQ(ref.attr, "op_type");
  expect_pos(ref.pos, 1, 64);
  const auto& fn = std::get<FuncCall>(items[5].value.value);
  EXPECT_EQ(fn.fn, "rank");
  ASSERT_EQ(fn.args.size(), 1u);
  EXPECT_EQ(std::get<NameRef>(fn.args[0].value).name, "x");
  expect_pos(items[5].pos, 2, 7);
  EXPECT_EQ(items[6].op, "<=");
  EXPECT_EQ(std::get<NameRef>(items[7].value.value).name, "y");
}

TEST(Dsl, Constraints) {
  auto c = [](std::string_view t) { return parse_constraint(t, origin(t, "rules.yaml")); };
  Constraint a = c("c1.strides == c2.strides");
  EXPECT_FALSE(a.negated);
  EXPECT_EQ(a.op, "==");
  EXPECT_EQ(std::get<AttrRef>(a.lhs.value).node, "c1");
  EXPECT_EQ(std::get<AttrRef>(a.rhs.value).attr, "strides");
  expect_pos(a.rhs.pos, 1, 15);
  Constraint b = c("rank(x) == 4");
  EXPECT_EQ(std::get<FuncCall>(b.lhs.value).fn, "rank");
  EXPECT_EQ(std::get<std::int64_t>(std::get<Literal>(b.rhs.value).value), 4);
  Constraint h = c("!has(conv.group)");
  EXPECT_TRUE(h.negated);
  EXPECT_EQ(h.op, "");
  EXPECT_EQ(std::get<AttrRef>(std::get<FuncCall>(h.lhs.value).args[0].value).attr, "group");
  EXPECT_EQ(c("const(w)").op, "");
  EXPECT_EQ(c("conv.padding in [\"SAME\", \"VALID\"]").op, "in");
  EXPECT_EQ(std::get<FuncCall>(c("my_check(conv)").lhs.value).fn, "my_check");
  EXPECT_EQ(c("has(\n  conv.dilations)").op, "");
  try {
    c("rank(x) ==");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().str(), "rules.yaml:1:11");
    EXPECT_EQ(e.message(), "expected a value after the comparison");
  }
  EXPECT_THROW(c("x y"), Error);
}

TEST(Dsl, ContinuationInsideBrackets) {
  Program p = parse(
      "conv = Conv2D(x,  # the input\n"
      "              w) {strides = [1,\n"
      "                             1]}\n"
      "relu = ReLU(conv)\n");
  ASSERT_EQ(p.statements.size(), 2u);
  expect_pos(call_of(p.statements[0].values[0]).args[1].pos, 2, 15);
  expect_pos(p.statements[1].pos, 4, 1);
  // A newline outside brackets ends the statement.
  EXPECT_EQ(error_of("a, \nb = F(x)\n"), "1:4: expected an expression");
}

TEST(Dsl, KeywordsAsNames) {
  Program p = parse("input = F(x)\noutput = G(input)\nas = H(output) as `id`\ninput input\n");
  ASSERT_EQ(p.statements.size(), 4u);
  EXPECT_EQ(p.statements[0].kind, Statement::Kind::Bind);
  EXPECT_EQ(p.statements[0].targets[0].name, "input");
  EXPECT_EQ(p.statements[2].node_id, "id");
  EXPECT_EQ(p.statements[3].kind, Statement::Kind::Input);
  EXPECT_EQ(p.statements[3].targets[0].name, "input");
}

TEST(Dsl, Errors) {
  EXPECT_EQ(error_of("conv = Conv2D(x, w\n"), "1:19: expected ')' to close the call to Conv2D");
  EXPECT_EQ(error_of("conv = Conv2D(x w)"), "1:17: expected ')' to close the call to Conv2D");
  EXPECT_EQ(error_of("a = F(x,\n\n)"), "3:1: expected an expression");
  EXPECT_EQ(error_of("conv = "), "1:7: expected an expression after '='");
  EXPECT_EQ(error_of("= F(x)"), "1:1: expected a statement");
  EXPECT_EQ(error_of("x = F(y) junk"), "1:10: expected the end of the line after the statement");
  EXPECT_EQ(error_of("x = F(y) {k}"), "1:12: expected '=' or a comparison (== != < <= > >= in) "
                                      "after the attribute name");
  EXPECT_EQ(error_of("x = F(y) {k = }"), "1:15: expected a value");
  EXPECT_EQ(error_of("x = F(y) {a = 1 b = 2}"), "1:17: expected '}' to close the attributes of F");
  EXPECT_EQ(error_of("x = Relu|(y)"), "1:10: expected an op name after '|'");
  EXPECT_EQ(error_of("x = Relu|Sig y"), "1:14: expected '(' after the op alternatives");
  EXPECT_EQ(error_of("x = [1, 2"), "1:10: expected ']' to close the list");
  EXPECT_EQ(error_of("x = \"abc"), "1:5: unterminated string (expected a closing '\"' on the same line)");
  EXPECT_EQ(error_of("x = `abc"), "1:5: unterminated quoted name (expected a closing '`' on the same line)");
  EXPECT_EQ(error_of("x = \"\\q\""), "1:6: unknown escape in string (use \\\\, \\n, \\t, \\r, \\xHH or \\\")");
  EXPECT_EQ(error_of("x = y:"), "1:7: expected an output number after ':'");
  EXPECT_EQ(error_of("x = tensor(float32, [2.5])"), "1:22: expected an integer dimension");
  EXPECT_EQ(error_of("x = tensor(float32, [2], [1.0"), "1:30: expected ']' to close the tensor data");
  EXPECT_EQ(error_of("x = 99999999999999999999"), "1:5: integer literal out of range");
  EXPECT_EQ(error_of("ok = F(x)\ny = G(a))"), "2:9: expected the end of the line after the statement");
  EXPECT_EQ(error_of("x = F(y) as"), "1:12: expected a node id after 'as'");
  EXPECT_EQ(error_of("x = F(y) {...}"), "1:14: expected a node name after '...'");
  EXPECT_EQ(error_of("x = F(y) {k = a.}"), "1:17: expected an attribute name after '.'");
}

TEST(Dsl, ErrorsCarryFileAndSourceLine) {
  std::string text = "a = F(x)\nb = G(a";
  try {
    parse_program(text, origin(text, "m.graph"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "m.graph:2:8: error: expected ')' to close the call to G");
    EXPECT_EQ(e.source_line(), "b = G(a");
  }
}

TEST(Dsl, OriginMapsIntoYamlBlockScalars) {
  // A pattern written as a YAML block scalar starting at line 10, column 7, with
  // continuation lines indented to column 7.
  TextOrigin o;
  o.file = "rules.yaml";
  o.first_line = 10;
  o.first_column = 7;
  o.indent_column = 7;
  try {
    parse_program("conv = Conv2D(x, w)\nbias = BiasAdd(conv b)\n", o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().str(), "rules.yaml:11:27");
  }
  o.first_column = 12;  // inline scalar `pattern: conv = ...` then indented continuation
  EXPECT_EQ(o.map(Pos{1, 3}).str(), "rules.yaml:10:14");
  EXPECT_EQ(o.map(Pos{2, 3}).str(), "rules.yaml:11:9");
}

TEST(Dsl, SplitLines) {
  auto lines = split_lines("a\nb\r\nc\rd");
  EXPECT_EQ(*lines, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(*split_lines("a\n"), std::vector<std::string>{"a"});
  EXPECT_TRUE(split_lines("")->empty());
}

TEST(Dsl, CrLfAndCommentsAndEmpty) {
  EXPECT_TRUE(parse("").statements.empty());
  EXPECT_TRUE(parse("# only a comment\n\n   \n").statements.empty());
  Program p = parse("input x\r\ny = F(x) # c\r\noutput y");
  ASSERT_EQ(p.statements.size(), 3u);
  expect_pos(p.statements[2].pos, 3, 1);
}

TEST(Dsl, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "x = " + std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
  std::string calls = "x = ";
  for (int i = 0; i < 50000; ++i) calls += "F(";
  EXPECT_NE(error_of(calls).find("nested too deeply"), std::string::npos);
}

TEST(Dsl, RandomInputNeverCrashes) {
  // Token soup drawn from the language's own pieces finds more corners than raw bytes.
  const std::vector<std::string> pieces = {
      "x", "Conv2D", "(", ")", "[", "]", "{", "}", ",", "=", "==", ":", "1", "...", "|", "*",
      "`a b`", "\"s\"", "\n", " ", "#c\n", "tensor", "float32", "-", "1.5e", "!", "in", ".",
      "input", "output", "as", "_", "\\", "\"", "`", "\r", "\t", "\xff", "1e999", "inf"};
  std::mt19937 rng(1234);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    int n = static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
    try {
      parse(text);
      parse_constraint(text, origin(text));
    } catch (const Error&) {
    }
  }
  std::string bytes;
  for (int i = 0; i < 20000; ++i) bytes += static_cast<char>(rng());
  EXPECT_NO_FATAL_FAILURE({
    try {
      parse(bytes);
    } catch (const Error&) {
    }
  });
}

namespace {
// An operand as fully parenthesized text, to read precedence at a glance.
std::string shape_of(const Operand& o) {
  if (const auto* f = std::get_if<FuncCall>(&o.value)) {
    if (is_operator(f->fn) && f->args.size() == 2) return "(" + shape_of(f->args[0]) + " " + f->fn + " " + shape_of(f->args[1]) + ")";
    if (is_operator(f->fn)) return f->fn + shape_of(f->args[0]);
    std::string s = f->fn + "(";
    for (std::size_t i = 0; i < f->args.size(); ++i) s += (i ? ", " : "") + shape_of(f->args[i]);
    return s + ")";
  }
  if (const auto* r = std::get_if<AttrRef>(&o.value)) return r->node + "." + r->attr;
  if (const auto* n = std::get_if<NameRef>(&o.value)) return n->name;
  if (const auto* l = std::get_if<Literal>(&o.value)) {
    if (const auto* i = std::get_if<std::int64_t>(&l->value)) return std::to_string(*i);
    if (const auto* b = std::get_if<bool>(&l->value)) return *b ? "true" : "false";
  }
  return "?";
}
std::string constraint_shape(std::string_view t) {
  Constraint c = parse_constraint(t, origin(t, "rules.yaml"));
  std::string s = (c.negated ? "not " : "") + shape_of(c.lhs);
  if (!c.op.empty()) s += " " + c.op + " " + shape_of(c.rhs);
  return s;
}
}  // namespace

TEST(Dsl, Expressions) {
  // Precedence: || && ! comparison + - * / % unary minus; left to right within a level.
  EXPECT_EQ(constraint_shape("dim(c, 1) == 2 * dim(x, 1)"), "dim(c, 1) == (2 * dim(x, 1))");
  EXPECT_EQ(constraint_shape("a.k - 1 - 2 * -b.k % 3 >= 0"), "((a.k - 1) - ((2 * -b.k) % 3)) >= 0");
  EXPECT_EQ(constraint_shape("a.k - -1 == 0"), "(a.k - -1) == 0");  // -1 stays a literal
  EXPECT_EQ(constraint_shape("!a.k == 1"), "not a.k == 1");
  EXPECT_EQ(constraint_shape("!(a.k == 1 || b.k)"), "!((a.k == 1) || b.k)");
  EXPECT_EQ(constraint_shape("const(x) || rank(x) == 4 && !const(y)"), "(const(x) || ((rank(x) == 4) && !const(y)))");
  EXPECT_EQ(constraint_shape("(a.k + 1) * 2 in [2, 4]"), "((a.k + 1) * 2) in ?");
  EXPECT_EQ(constraint_shape("!(rank(x) == 4)"), "not rank(x) == 4");
  // Attribute values and function arguments take expressions too.
  Program p = parse("F(x) {k = (a.k + 7) / 8, t = as_tensor(value(a) + value(b))}\n");
  const auto& items = call_of(p.statements[0].values[0]).attrs;
  EXPECT_EQ(shape_of(items[0].value), "((a.k + 7) / 8)");
  EXPECT_EQ(shape_of(items[1].value), "as_tensor((value(a) + value(b)))");
  // Errors say what is missing, where.
  auto error = [](std::string_view t) {
    try {
      parse_constraint(t, origin(t, "rules.yaml"));
    } catch (const Error& e) {
      return std::to_string(e.loc().column) + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("dim(x, 1) + == 3"), "13: expected an operand after the operator");
  EXPECT_EQ(error("(rank(x) == 4 || const(x)"), "26: expected ')' to close the parenthesis");
  EXPECT_EQ(error("const(x) ||"), "12: expected an operand after the operator");
  EXPECT_EQ(error("!"), "2: expected an operand after '!'");
}

TEST(Dsl, TypedGraphText) {
  Program p = parse("input x: float32[1, 3, N, ?], y, s: int64[]\nc, d = Split(x): float32[1], bool\ne = F(x:1)\n");
  const Statement& in = p.statements[0];
  ASSERT_EQ(in.targets.size(), 3u);
  ASSERT_EQ(in.types.size(), 3u);
  EXPECT_TRUE(in.types[0].present);
  EXPECT_EQ(in.types[0].dtype, "float32");
  EXPECT_EQ(in.types[0].dims, (std::vector<std::int64_t>{1, 3, -1, -1}));
  EXPECT_EQ(in.types[0].dim_params, (std::vector<std::string>{"", "", "N", ""}));
  EXPECT_FALSE(in.types[1].present);
  EXPECT_TRUE(in.types[2].has_shape);
  EXPECT_TRUE(in.types[2].dims.empty());
  const Statement& split = p.statements[1];
  ASSERT_EQ(split.types.size(), 2u);
  EXPECT_TRUE(split.types[0].has_shape);
  EXPECT_FALSE(split.types[1].has_shape);
  EXPECT_EQ(split.types[1].dtype, "bool");
  EXPECT_EQ(call_of(p.statements[2].values[0]).args[0].port, 1);  // `x:1` still picks an output
  EXPECT_EQ(error_of("input x: [1]"), "1:10: expected a type like float32[1, 3, 224, 224] after ':'");
  EXPECT_EQ(error_of("input x: float32[1, 2"), "1:22: expected ']' to close the shape");
  EXPECT_EQ(error_of("c = F(x): float32[1.5]"), "1:19: expected a dimension (a number, a name or ?)");
}

// The one Spirit X3 grammar of graphfuse: graph text, patterns, rewrite templates and
// `where:` constraints, producing the AST of ast.h with 1-based positions.
#include "parser.h"

#include "x3_lexer.h"

namespace graphfuse::dsl {

namespace {

namespace x3 = boost::spirit::x3;
using namespace lex;
using x3::_attr;
using x3::_val;
using x3::lit;

// ---- tokens ------------------------------------------------------------------------------
constexpr MarkPos mark{};
constexpr Ident ident{};
constexpr Name name{};
constexpr OpName op_name{};
constexpr StringLit string_lit{};
constexpr NumberP number{};
constexpr AttrPathP attr_path{};
constexpr Brackets inside{};
const Kw kw_true("true"), kw_false("false"), kw_tensor("tensor"), kw_in("in"),
    kw_input("input"), kw_output("output"), kw_as("as");

/// A closer whose message does not depend on the rule being parsed.
struct Fixed {
  const char* text;
  template <class R>
  std::string operator()(const R&) const { return text; }
};
/// "to close the call to Conv2D" (the rule attribute is the Call or FuncCall being parsed).
struct CallName {
  const char* prefix;
  template <class R>
  std::string operator()(const R& r) const {
    std::string s = prefix;
    if constexpr (requires { r.ops; }) {
      for (std::size_t i = 0; i < r.ops.size(); ++i) s += (i ? "|" : "") + r.ops[i];
    } else if constexpr (requires { r.fn; }) {
      s += r.fn;
    }
    return s;
  }
};

// ---- rules -------------------------------------------------------------------------------
x3::rule<struct literal_id, Literal> const literal_r = "literal";
x3::rule<struct tensor_id, TensorLiteral> const tensor_r = "tensor";
x3::rule<struct name_expr_id, Expr> const name_expr_r = "name";
x3::rule<struct call_id, Call> const call_r = "call";
x3::rule<struct expr_id, Expr> const expr_r = "expression";
x3::rule<struct operand_id, Operand> const operand_r = "operand";
x3::rule<struct func_id, FuncCall> const func_r = "function call";
x3::rule<struct attr_item_id, AttrItem> const attr_item_r = "attribute";
x3::rule<struct cmp_id, std::string> const cmp_r = "comparison";
x3::rule<struct input_id, Statement> const input_r = "input statement";
x3::rule<struct output_id, Statement> const output_r = "output statement";
x3::rule<struct bind_id, Statement> const bind_r = "binding";
x3::rule<struct exprs_id, Statement> const exprs_r = "expression statement";
x3::rule<struct statement_id, Statement> const statement_r = "statement";
x3::rule<struct program_id, Program> const program_r = "program";
x3::rule<struct constraint_only_id, Operand> const constraint_only_r = "constraint";
x3::rule<struct name_ref_id, NameRef> const name_ref_r = "name";
x3::rule<struct operand_list_id, Operand> const operand_list_r = "list";
// Expressions, loosest binding first: || && ! comparison + - * / % unary-minus operand.
x3::rule<struct or_id, Operand> const or_r = "expression";
x3::rule<struct and_id, Operand> const and_r = "expression";
x3::rule<struct not_id, Operand> const not_r = "expression";
x3::rule<struct cmpx_id, Operand> const cmpx_r = "expression";
x3::rule<struct sum_id, Operand> const sum_r = "expression";
x3::rule<struct product_id, Operand> const product_r = "expression";
x3::rule<struct unary_id, Operand> const unary_r = "expression";
x3::rule<struct paren_id, Operand> const paren_r = "parenthesized expression";
x3::rule<struct type_id, TypeAnnot> const type_r = "type";

// ---- literals ----------------------------------------------------------------------------
auto const push_shape = [](auto& c) { _val(c).shape.push_back(_attr(c).i); };
auto const push_data = [](auto& c) {
  TensorLiteral& t = _val(c);
  const Number& n = _attr(c);
  // int_data mirrors data only while every element so far was an integer.
  if (n.is_int && t.int_data.size() == t.data.size()) t.int_data.push_back(n.i);
  else t.int_data.clear();
  t.data.push_back(n.is_int ? static_cast<double>(n.i) : n.d);
  if (!n.is_int) t.int_data.clear();
};
// A float where a dimension belongs fails the match, so the expectation point reports it.
auto const int_only = [](auto& c) { x3::_pass(c) = _attr(c).is_int; };

auto const tensor_r_def =
    kw_tensor >> lit('(') >>
    inside[ident[([](auto& c) { _val(c).dtype = _attr(c); })] >> lit(',') >> Must{"a shape list like [2, 3]"}[lit('[')] >>
           inside[(&lit(']') | Must{"an integer dimension"}[number[int_only][push_shape]] >>
                                   *(lit(',') >> Must{"an integer dimension"}
                                                     [number[int_only][push_shape]])) >>
                  closer(']', Fixed{"to close the shape"})] >>
           -(lit(',') >> Must{"a data list like [1.0, 2.0]"}[lit('[')][([](auto& c) {
               _val(c).has_data = true;
             })] >>
             inside[-(number[push_data] >>
                      *(lit(',') >> Must{"a number"}[number[push_data]])) >>
                    closer(']', Fixed{"to close the tensor data"})]) >>
           closer(')', Fixed{"to close the tensor"})];

auto const set_list = [](auto& c) { _val(c).value = std::vector<Literal>{}; };
auto const push_item = [](auto& c) {
  std::get<std::vector<Literal>>(_val(c).value).push_back(std::move(_attr(c)));
};
auto const set_number = [](auto& c) {
  const Number& n = _attr(c);
  if (n.is_int) _val(c).value = n.i;
  else _val(c).value = n.d;
};

auto const literal_r_def =
    mark >>
    (tensor_r[([](auto& c) { _val(c).value = std::move(_attr(c)); })] |
     lit('[')[set_list] >>
         inside[-(literal_r[push_item] >> *(lit(',') >> Must{"a literal"}[literal_r[push_item]])) >>
                closer(']', Fixed{"to close the list"})] |
     number[set_number] | string_lit[([](auto& c) { _val(c).value = std::move(_attr(c)); })] |
     kw_true[([](auto& c) { _val(c).value = true; })] |
     kw_false[([](auto& c) { _val(c).value = false; })]);

// ---- expressions -------------------------------------------------------------------------
auto const set_name = [](auto& c) {
  _val(c).kind = Expr::Kind::Name;
  _val(c).name = std::move(_attr(c).text);
  _val(c).quoted = _attr(c).quoted;
};
auto const set_port = [](auto& c) {
  x3::_pass(c) = _attr(c) <= 1000000u;
  _val(c).port = static_cast<int>(_attr(c));
};

auto const name_expr_r_def =
    mark >> name[set_name] >>
    // `x:1` picks an output; `x: float32[...]` (a name after ':') is a type, left to the statement.
    -(lit(':') >> !ident >> !lit('[') >> Must{"an output number after ':'"}[x3::uint_[set_port]]) >>
    -(lit("...")[([](auto& c) { _val(c).variadic = true; })]);

auto const push_op = [](auto& c) { _val(c).ops.push_back(std::move(_attr(c))); };
auto const push_arg = [](auto& c) { _val(c).args.push_back(std::move(_attr(c))); };
auto const push_attr = [](auto& c) { _val(c).attrs.push_back(std::move(_attr(c))); };

auto const call_ops = lit('*')[([](auto& c) { _val(c).ops.push_back("*"); })] >>
                          Must{"'(' after '*'"}[lit('(')] |
                      op_name[push_op] >>
                          (+(lit('|') >> Must{"an op name after '|'"}[op_name[push_op]]) >>
                               Must{"'(' after the op alternatives"}[lit('(')] |
                           lit('('));

auto const attr_block =
    lit('{') >>
    inside[-(attr_item_r[push_attr] >>
             *(lit(',') >> Must{"an attribute (key = value, key == value, !key or ...node)"}
                               [attr_item_r[push_attr]])) >>
           closer('}', CallName{"to close the attributes of "})];

auto const call_r_def =
    mark >> call_ops >>
    inside[-(expr_r[push_arg] >> *(lit(',') >> Must{"an expression"}[expr_r[push_arg]])) >>
           closer(')', CallName{"to close the call to "})] >>
    -attr_block;

auto const expr_r_def =
    mark >> (literal_r[([](auto& c) {
               _val(c).kind = Expr::Kind::Literal;
               _val(c).literal = std::move(_attr(c));
             })] |
             call_r[([](auto& c) {
               _val(c).kind = Expr::Kind::Call;
               _val(c).call = std::make_shared<Call>(std::move(_attr(c)));
             })] >> -(lit("...")[([](auto& c) { _val(c).variadic = true; })]) |
             name_expr_r[([](auto& c) { _val(c) = std::move(_attr(c)); })]);

// ---- operands, attribute items, constraints ----------------------------------------------
auto const func_r_def =
    mark >> ident[([](auto& c) { _val(c).fn = std::move(_attr(c)); })] >> lit('(') >>
    inside[-(or_r[push_arg] >> *(lit(',') >> Must{"an argument"}[or_r[push_arg]])) >>
           closer(')', CallName{"to close the call to "})];

// `[...]` as an operand: items may be computed (`[value(lo), c.k]`). A list whose items
// are all literals folds back into one list Literal, so readers of literal-only text
// (graph files) see the same AST as before.
auto const push_list_item = [](auto& c) {
  std::get<OperandList>(_val(c).value).items.push_back(std::move(_attr(c)));
};
auto const fold_list = [](auto& c) {
  auto& list = std::get<OperandList>(_val(c).value);
  for (const Operand& o : list.items)
    if (!std::holds_alternative<Literal>(o.value)) return;
  Literal lit;
  lit.pos = _val(c).pos;
  std::vector<Literal> items;
  for (Operand& o : list.items) items.push_back(std::move(std::get<Literal>(o.value)));
  lit.value = std::move(items);
  _val(c).value = std::move(lit);
};
auto const operand_list_r_def =
    mark >> lit('[')[([](auto& c) { _val(c).value = OperandList{{}, _val(c).pos}; })] >>
    inside[-(or_r[push_list_item] >> *(lit(',') >> Must{"a list item"}[or_r[push_list_item]])) >>
           closer(']', Fixed{"to close the list"})][fold_list];

auto const paren_r_def = lit('(') >> inside[or_r[([](auto& c) { _val(c) = std::move(_attr(c)); })] >>
                                             closer(')', Fixed{"to close the parenthesis"})];

auto const operand_r_def =
    mark >>
    (paren_r[([](auto& c) { _val(c).value = std::move(_attr(c).value); })] |
     operand_list_r[([](auto& c) { _val(c).value = std::move(_attr(c).value); })] |
     literal_r[([](auto& c) { _val(c).value = std::move(_attr(c)); })] |
     func_r[([](auto& c) { _val(c).value = std::move(_attr(c)); })] |
     attr_path[([](auto& c) {
       _val(c).value = AttrRef{std::move(_attr(c).node.text), std::move(_attr(c).attr), _val(c).pos};
     })] |
     name[([](auto& c) { _val(c).value = NameRef{std::move(_attr(c).text), _val(c).pos}; })]);

auto const cmp_r_def = x3::string("==") | x3::string("!=") | x3::string("<=") |
                       x3::string(">=") | x3::string("<") | x3::string(">") |
                       kw_in >> x3::attr(std::string("in"));

auto const set_key = [](auto& c) { _val(c).key = std::move(_attr(c).text); };
auto const set_value = [](auto& c) { _val(c).value = std::move(_attr(c)); };

auto const attr_item_r_def =
    mark >>
    (lit("...")[([](auto& c) { _val(c).kind = AttrItem::Kind::Spread; })] >>
         Must{"a node name after '...'"}[name[set_key]] |
     lit('!')[([](auto& c) { _val(c).kind = AttrItem::Kind::Absent; })] >>
         Must{"an attribute name after '!'"}[name[set_key]] |
     name[set_key] >>
         Must{"'=' or a comparison (== != < <= > >= in) after the attribute name"}
             [cmp_r[([](auto& c) {
                _val(c).kind = AttrItem::Kind::Constraint;
                _val(c).op = std::move(_attr(c));
              })] |
              (lit('=') >> !lit('='))[([](auto& c) { _val(c).kind = AttrItem::Kind::Assign; })]] >>
         Must{"a value"}[sum_r[set_value]]);

// An operator applied to the operands so far: `a + b` becomes the call "+"(a, b) at a's
// position; a prefix operator wraps the operand that follows it.
struct Binary {
  const char* op;
  template <class C>
  void operator()(C& c) const {
    Operand lhs = std::move(_val(c));
    FuncCall f{op, {}, lhs.pos};
    f.args.push_back(std::move(lhs));
    f.args.push_back(std::move(_attr(c)));
    _val(c).pos = f.pos;
    _val(c).value = std::move(f);
  }
};
struct Prefix {
  const char* op;
  template <class C>
  void operator()(C& c) const {
    FuncCall f{op, {}, _val(c).pos};
    f.args.push_back(std::move(_attr(c)));
    _val(c).value = std::move(f);
  }
};
auto const take = [](auto& c) { _val(c) = std::move(_attr(c)); };
auto const after_op = Must{"an operand after the operator"};

auto const or_r_def = and_r[take] >> *(lit("||") >> after_op[and_r][Binary{"||"}]);
auto const and_r_def = not_r[take] >> *(lit("&&") >> after_op[not_r][Binary{"&&"}]);
// `!a == b` negates the comparison, as a `where:` line always read.
auto const not_r_def = mark >> (lit('!') >> !lit('=') >> Must{"an operand after '!'"}[not_r][Prefix{"!"}] | cmpx_r[take]);
auto const cmp_binary = [](auto& c) {
  std::string op = std::move(boost::fusion::at_c<0>(_attr(c)));
  Operand lhs = std::move(_val(c));
  FuncCall f{std::move(op), {}, lhs.pos};
  f.args.push_back(std::move(lhs));
  f.args.push_back(std::move(boost::fusion::at_c<1>(_attr(c))));
  _val(c).pos = f.pos;
  _val(c).value = std::move(f);
};
auto const cmpx_r_def = sum_r[take] >> -(cmp_r >> Must{"a value after the comparison"}[sum_r])[cmp_binary];
auto const sum_r_def = product_r[take] >> *((lit('+') >> after_op[product_r])[Binary{"+"}] |
                                            (lit('-') >> after_op[product_r])[Binary{"-"}]);
auto const product_r_def = unary_r[take] >> *((lit('*') >> after_op[unary_r])[Binary{"*"}] |
                                              (lit('/') >> after_op[unary_r])[Binary{"/"}] |
                                              (lit('%') >> after_op[unary_r])[Binary{"%"}]);
// A number takes its own sign (`-1` stays a literal); `-x` is the negation of x.
auto const unary_r_def = operand_r[take] | mark >> (lit('-') >> after_op[unary_r])[Prefix{"-"}];

// ---- statements --------------------------------------------------------------------------
auto const push_target = [](auto& c) { _val(c).targets.push_back(std::move(_attr(c))); };
auto const push_value = [](auto& c) { _val(c).values.push_back(std::move(_attr(c))); };
auto const name_ahead = &name;

// ---- types (graph text) -----------------------------------------------------------------
auto const push_dim = [](auto& c) {
  _val(c).dims.push_back(_attr(c).i);
  _val(c).dim_params.emplace_back();
};
auto const push_symbol = [](auto& c) {
  _val(c).dims.push_back(-1);
  _val(c).dim_params.push_back(std::move(_attr(c).text));
};
auto const push_unknown = [](auto& c) {
  _val(c).dims.push_back(-1);
  _val(c).dim_params.emplace_back();
};
// A symbolic dimension is a name, quoted when it is no identifier (ONNX allows any text).
auto const dim_r = number[int_only][push_dim] | name[push_symbol] | lit('?')[push_unknown];
auto const type_r_def =
    mark >> ident[([](auto& c) {
      _val(c).present = true;
      _val(c).dtype = std::move(_attr(c));
    })] >>
    -(lit('[')[([](auto& c) { _val(c).has_shape = true; })] >>
      inside[(&lit(']') | Must{"a dimension (a number, a name or ?)"}[dim_r] >>
                                *(lit(',') >> Must{"a dimension (a number, a name or ?)"}[dim_r])) >>
             closer(']', Fixed{"to close the shape"})]);
// The type of the statement's target just read (`input x: float32[2], y`), or of each
// target in order (`a, b = Split(x): float32[2], float32[2]`).
auto const type_of_last = [](auto& c) {
  _val(c).types.resize(_val(c).targets.size());
  _val(c).types.back() = std::move(_attr(c));
};
auto const push_type = [](auto& c) { _val(c).types.push_back(std::move(_attr(c))); };
auto const type_after = Must{"a type like float32[1, 3, 224, 224] after ':'"};
auto const typed_input = name_expr_r[push_target] >> -(lit(':') >> type_after[type_r][type_of_last]);

auto const input_r_def =
    mark >> kw_input[([](auto& c) { _val(c).kind = Statement::Kind::Input; })] >> name_ahead >>
    typed_input >> *(lit(',') >> Must{"a name"}[name_ahead] >> typed_input);

auto const output_r_def =
    mark >> kw_output[([](auto& c) { _val(c).kind = Statement::Kind::Output; })] >> name_ahead >>
    name_expr_r[push_value] >> *(lit(',') >> Must{"a value name"}[name_expr_r[push_value]]);

auto const bind_r_def =
    mark >> name_expr_r[push_target] >> *(lit(',') >> name_expr_r[push_target]) >> lit('=') >>
    !lit('=') >>
    Must{"an expression after '='"}[expr_r[([](auto& c) {
      _val(c).kind = Statement::Kind::Bind;
      _val(c).values.push_back(std::move(_attr(c)));
    })]] >>
    -(lit(':') >> type_after[type_r][push_type] >> *(lit(',') >> type_after[type_r][push_type])) >>
    -(kw_as >> Must{"a node id after 'as'"}[name_ref_r[([](auto& c) {
        _val(c).node_id = std::move(_attr(c).name);
        _val(c).node_id_pos = _attr(c).pos;
      })]]);

auto const name_ref_r_def =
    mark >> name[([](auto& c) { _val(c).name = std::move(_attr(c).text); })];

auto const exprs_r_def =
    mark >> expr_r[([](auto& c) {
      _val(c).kind = Statement::Kind::Expr;
      _val(c).values.push_back(std::move(_attr(c)));
    })] >>
    *(lit(',') >> Must{"an expression"}[expr_r[push_value]]);

auto const take_statement = [](auto& c) { _val(c) = std::move(_attr(c)); };
auto const statement_r_def = input_r[take_statement] | output_r[take_statement] |
                             bind_r[take_statement] | exprs_r[take_statement];

auto const program_r_def =
    *x3::eol >>
    *(statement_r[([](auto& c) { _val(c).statements.push_back(std::move(_attr(c))); })] >>
      Must{"the end of the line after the statement"}[+x3::eol | x3::eoi]) >>
    Must{"a statement"}[x3::eoi];

// The same program, each statement handed to the sink in the context once its line ended.
struct sink_tag;
using Sink = std::function<void(Statement&)>;
x3::rule<struct statement_line_id, Statement> const statement_line_r = "statement";
auto const statement_line_r_def =
    statement_r[take_statement] >> Must{"the end of the line after the statement"}[+x3::eol | x3::eoi];
auto const stream_r = *x3::eol >>
                      *statement_line_r[([](auto& c) { x3::get<sink_tag>(c).get()(_attr(c)); })] >>
                      Must{"a statement"}[x3::eoi];

auto const constraint_only_r_def =
    or_r[([](auto& c) { _val(c) = std::move(_attr(c)); })] >> Must{"the end of the constraint"}[x3::eoi];

BOOST_SPIRIT_DEFINE(literal_r, tensor_r, name_expr_r, call_r, expr_r, operand_r, func_r,
                    attr_item_r, cmp_r, input_r, output_r, bind_r, exprs_r,
                    statement_r, program_r, statement_line_r, constraint_only_r, name_ref_r, operand_list_r,
                    or_r, and_r, not_r, cmpx_r, sum_r, product_r, unary_r, paren_r, type_r)

/// Runs `rule` over the whole text with the given skipper, turning syntax errors into
/// graphfuse::Error at their mapped positions.
template <class Rule, class Attr>
void run(const Rule& rule, std::string_view text, const TextOrigin& origin, bool newlines,
         Attr& out) {
  ParseState st(text.data(), text.data() + text.size());
  It first = st.begin;
  auto at = [&](It where) {
    // At the end of the text, point just after the last thing written rather than at an
    // empty line beyond it.
    if (where == st.end)
      while (where != st.begin && std::isspace(static_cast<unsigned char>(where[-1]))) --where;
    return st.pos(where);
  };
  try {
    bool ok = with_context(st, newlines ? st.bracket_skipper : st.line_skipper,
                           [&](auto const& ctx) {
                             return rule.parse(first, st.end, ctx, x3::unused, out);
                           });
    if (!ok) throw SyntaxError{first, "syntax error"};
  } catch (const SyntaxError& e) {
    throw origin.error(at(e.where), e.message);
  } catch (const x3::expectation_failure<It>& e) {
    throw origin.error(at(e.where()), "expected " + e.which());
  }
}

}  // namespace

Program parse_program(std::string_view text, const TextOrigin& origin) {
  Program p;
  run(program_r, text, origin, false, p);
  return p;
}

void parse_statements(std::string_view text, const TextOrigin& origin, const Sink& take) {
  x3::unused_type none;
  run(x3::with<sink_tag>(std::cref(take))[stream_r], text, origin, false, none);
}

Constraint parse_constraint(std::string_view text, const TextOrigin& origin) {
  Operand e;
  run(constraint_only_r, text, origin, true, e);
  // A comparison (negated or not) and a negated plain predicate keep their simple form,
  // which explain and the program listing show as written; anything else (`||`, `&&`,
  // `!(...)` over those) is a predicate whose value is the whole expression.
  Constraint c;
  c.pos = e.pos;
  const Operand* top = &e;
  const auto* call = std::get_if<FuncCall>(&top->value);
  if (call && call->fn == "!" && call->args.size() == 1) {
    const auto* inner = std::get_if<FuncCall>(&call->args[0].value);
    if (!inner || !is_operator(inner->fn) || is_comparison(inner->fn)) {
      c.negated = true;
      top = &call->args[0];
      call = inner;
    }
  }
  if (call && is_comparison(call->fn) && call->args.size() == 2) {
    c.op = call->fn;
    c.lhs = call->args[0];
    c.rhs = call->args[1];
  } else {
    c.lhs = *top;
  }
  return c;
}

}  // namespace graphfuse::dsl

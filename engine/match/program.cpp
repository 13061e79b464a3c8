// Listing match programs in readable form.
#include "match/program.h"

#include <sstream>

#include "match/attr_compare.h"

namespace graphfuse::match {

namespace {

// Streams rather than `"x" + std::string(...)`: GCC 12 warns falsely (-Wrestrict) on
// a literal plus a temporary string.
struct Reg {
  const MatchProgram& p;
  std::uint32_t r;
};
std::ostream& operator<<(std::ostream& o, Reg n) {
  o << 'n' << n.r;
  if (n.r < n.p.node_names.size() && !n.p.node_names[n.r].empty()) o << '(' << n.p.node_names[n.r] << ')';
  return o;
}

void put_value(std::ostream& o, const AttrValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, float>) o << x;
        else if constexpr (std::is_same_v<T, bool>) o << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, std::string>) o << '"' << x << '"';
        else o << '<' << attr_kind_name(v) << '>';
      },
      v);
}

}  // namespace

std::string disassemble(const MatchProgram& p) {
  std::ostringstream o;
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const Instr& in = p.code[pc];
    o << pc << "  ";
    switch (in.op) {
      case Opcode::CheckOp: {
        o << "check_op   " << Reg{p, in.a} << " in {";
        const auto& set = p.op_sets[in.aux];
        for (std::size_t i = 0; i < set.size(); ++i) o << (i ? ", " : "") << set[i].name();
        o << '}';
        break;
      }
      case Opcode::CheckArity: o << "arity      " << Reg{p, in.a} << " has " << in.b << " inputs"; break;
      case Opcode::LoadInput: o << "load       v" << in.c << " = input " << in.b << " of " << Reg{p, in.a}; break;
      case Opcode::Producer:
        o << "producer   " << Reg{p, in.c} << " = producer of v" << in.a << " (output " << in.b << ')';
        break;
      case Opcode::ValueIs: o << "value_is   v" << in.a << " == output " << in.c << " of " << Reg{p, in.b}; break;
      case Opcode::SameValue: o << "same       v" << in.a << " == v" << in.b; break;
      case Opcode::CheckAttr: {
        const AttrCheck& c = p.attr_checks[in.aux];
        o << "check_attr " << Reg{p, c.node} << '.' << c.key << ' ' << cmp_name(c.cmp);
        if (c.other_node >= 0) {
          o << ' ' << Reg{p, static_cast<std::uint32_t>(c.other_node)} << '.' << c.other_key;
        } else if (c.cmp != Cmp::Has && c.cmp != Cmp::Absent) {
          o << ' ';
          put_value(o, c.literal);
        }
        break;
      }
      case Opcode::Fork:
        o << "fork      ";
        for (std::uint32_t t : p.forks[in.aux]) o << ' ' << t;
        break;
      case Opcode::Jump: o << "jump       " << in.aux; break;
      case Opcode::Accept: o << "accept"; break;
    }
    o << '\n';
  }
  return o.str();
}

}  // namespace graphfuse::match

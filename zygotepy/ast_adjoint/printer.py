"""A fast `ast.unparse` for the node kinds the emitter builds: the same text, character for character as Python 3.11
prints it (other versions' `ast.unparse` may differ in details such as parentheses; the text means the same).

`ast.unparse` is generic (a visitor looked up by name per node, context managers per bracket, a write call per token)
and took a quarter of a small function's transform. This printer returns each expression's text directly and keeps
`ast.unparse`'s one quirk that shows in our trees: the precedence a parent gives a child is remembered per node object,
and a parent that gives none (a call's argument, a tuple's element) leaves the node's last one (`ast.unparse`'s default
if none: TEST). The emitter shares nodes (Names, a call's argument nodes), so that memory is reproduced, not simplified.
A node kind it does not know raises `Unsupported`; the emitter then falls back to `ast.unparse`.
"""
import ast

__all__ = ["Unsupported", "expression", "lines"]

# ast._Precedence's values
_TUPLE, _YIELD, _TEST, _OR, _AND, _NOT, _CMP, _EXPR, _FACTOR, _POWER, _ATOM = 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 18
_BINOP = {ast.Add: ("+", 13), ast.Sub: ("-", 13), ast.Mult: ("*", 14), ast.MatMult: ("@", 14), ast.Div: ("/", 14),
          ast.Mod: ("%", 14), ast.LShift: ("<<", 12), ast.RShift: (">>", 12), ast.BitOr: ("|", 9),
          ast.BitXor: ("^", 10), ast.BitAnd: ("&", 11), ast.FloorDiv: ("//", 14), ast.Pow: ("**", _POWER)}
_UNOP = {ast.Invert: ("~", _FACTOR), ast.Not: ("not ", _NOT), ast.UAdd: ("+", _FACTOR), ast.USub: ("-", _FACTOR)}
_CMPOP = {ast.Eq: " == ", ast.NotEq: " != ", ast.Lt: " < ", ast.LtE: " <= ", ast.Gt: " > ", ast.GtE: " >= ",
          ast.Is: " is ", ast.IsNot: " is not ", ast.In: " in ", ast.NotIn: " not in "}
_BOOLOP = {ast.And: (" and ", _AND), ast.Or: (" or ", _OR)}


class Unsupported(Exception):
    """A node kind this printer does not print."""


def _next(p):
    return p + 1 if p < _ATOM else p


def _constant(value):
    if isinstance(value, (float, complex)):
        return repr(value).replace("inf", "1e309").replace("nan", "(1e309-1e309)")
    return repr(value)


class _Printer:
    def __init__(self):
        self.prec = {}   # node -> the precedence its last parent gave it (ast._Unparser._precedences)
        self.out = []    # lines of text, indented

    def expr(self, node):
        if type(node) is ast.Name:
            return node.id
        method = _EXPRESSIONS.get(type(node))
        if method is None:
            raise Unsupported(type(node).__name__)
        return method(self, node)

    def _parens(self, node, p, text):
        return f"({text})" if self.prec.get(node, _TEST) > p else text

    def _items(self, elts):
        return self.expr(elts[0]) + "," if len(elts) == 1 else ", ".join([self.expr(e) for e in elts])

    def constant(self, node):
        value = node.value
        if isinstance(value, tuple):
            return "(" + (_constant(value[0]) + "," if len(value) == 1 else ", ".join(map(_constant, value))) + ")"
        if value is ...:
            return "..."
        return ("u" if node.kind == "u" else "") + _constant(value)

    def tuple_(self, node):
        text = self._items(node.elts)
        return f"({text})" if not node.elts or self.prec.get(node, _TEST) > _TUPLE else text

    def list_(self, node):
        return "[" + ", ".join([self.expr(e) for e in node.elts]) + "]"

    def unaryop(self, node):
        op, p = _UNOP[type(node.op)]
        self.prec[node.operand] = p
        return self._parens(node, p, op + self.expr(node.operand))

    def binop(self, node):
        op, p = _BINOP[type(node.op)]
        left, right = (_next(p), p) if p == _POWER else (p, _next(p))
        self.prec[node.left] = left
        text = self.expr(node.left)
        self.prec[node.right] = right
        return self._parens(node, p, f"{text} {op} {self.expr(node.right)}")

    def compare(self, node):
        prec = self.prec
        prec[node.left] = _CMP + 1
        for c in node.comparators:
            prec[c] = _CMP + 1
        text = self.expr(node.left) + "".join([_CMPOP[type(o)] + self.expr(e)
                                               for o, e in zip(node.ops, node.comparators)])
        return self._parens(node, _CMP, text)

    def boolop(self, node):
        sep, p0 = _BOOLOP[type(node.op)]
        parts, p = [], p0
        for v in node.values:  # each operand one level tighter than the one before (as ast.unparse does)
            p = _next(p)
            self.prec[v] = p
            parts.append(self.expr(v))
        return self._parens(node, p0, sep.join(parts))

    def attribute(self, node):
        self.prec[node.value] = _ATOM
        value = node.value
        space = " " if isinstance(value, ast.Constant) and isinstance(value.value, int) else ""
        return f"{self.expr(value)}{space}.{node.attr}"

    def call(self, node):
        self.prec[node.func] = _ATOM
        args = [self.expr(a) for a in node.args] + [self.keyword(k) for k in node.keywords]
        return self.expr(node.func) + "(" + ", ".join(args) + ")"

    def keyword(self, node):
        return ("**" if node.arg is None else node.arg + "=") + self.expr(node.value)

    def subscript(self, node):
        self.prec[node.value] = _ATOM
        value, index = self.expr(node.value), node.slice
        return value + "[" + (self._items(index.elts) if type(index) is ast.Tuple and index.elts
                              else self.expr(index)) + "]"

    def starred(self, node):
        self.prec[node.value] = _EXPR
        return "*" + self.expr(node.value)

    def slice_(self, node):
        text = (self.expr(node.lower) if node.lower else "") + ":" + (self.expr(node.upper) if node.upper else "")
        return text + ":" + self.expr(node.step) if node.step else text

    def ifexp(self, node):
        self.prec[node.body] = self.prec[node.test] = _TEST + 1
        text = self.expr(node.body) + " if " + self.expr(node.test) + " else "
        self.prec[node.orelse] = _TEST
        return self._parens(node, _TEST, text + self.expr(node.orelse))

    def dict_(self, node):
        items = []
        for k, v in zip(node.keys, node.values):
            if k is None:
                self.prec[v] = _EXPR
                items.append("**" + self.expr(v))
            else:
                items.append(self.expr(k) + ": " + self.expr(v))
        return "{" + ", ".join(items) + "}"

    # --- statements: one line each (compound ones: a header line, then their bodies one level in) ------------------
    def block(self, stmts, indent, docstring=False):
        for i, s in enumerate(stmts):
            if i == 0 and docstring and type(s) is ast.Expr and type(s.value) is ast.Constant \
                    and isinstance(s.value.value, str):
                self.out.append(indent + _docstring(s.value))
                continue
            method = _STATEMENTS.get(type(s))
            if method is None:
                raise Unsupported(type(s).__name__)
            method(self, s, indent)

    def line(self, indent, text):
        self.out.append(indent + text)

    def stmt_expr(self, s, indent):
        self.prec[s.value] = _YIELD
        self.line(indent, self.expr(s.value))

    def stmt_assign(self, s, indent):
        if s.type_comment:
            raise Unsupported("type comment")
        text = ""
        for t in s.targets:
            self.prec[t] = _TUPLE
            text += self.expr(t) + " = "
        self.line(indent, text + self.expr(s.value))

    def stmt_augassign(self, s, indent):
        self.line(indent, f"{self.expr(s.target)} {_BINOP[type(s.op)][0]}= {self.expr(s.value)}")

    def stmt_return(self, s, indent):
        self.line(indent, "return " + self.expr(s.value) if s.value else "return")

    def stmt_pass(self, s, indent):
        self.line(indent, "pass")

    def stmt_break(self, s, indent):
        self.line(indent, "break")

    def stmt_continue(self, s, indent):
        self.line(indent, "continue")

    def stmt_def(self, s, indent):
        if s.decorator_list or s.returns or s.type_comment:
            raise Unsupported("decorated or annotated def")
        if self.out:
            self.out.append("")
        self.line(indent, f"def {s.name}({_arguments(s.args)}):")
        self.block(s.body, indent + "    ", docstring=True)

    def stmt_for(self, s, indent):
        if s.type_comment:
            raise Unsupported("type comment")
        self.prec[s.target] = _TUPLE
        target = self.expr(s.target)
        self.line(indent, f"for {target} in {self.expr(s.iter)}:")
        self._body_and_else(s, indent)

    def stmt_while(self, s, indent):
        self.line(indent, f"while {self.expr(s.test)}:")
        self._body_and_else(s, indent)

    def stmt_if(self, s, indent):
        self.line(indent, f"if {self.expr(s.test)}:")
        self.block(s.body, indent + "    ")
        while s.orelse and len(s.orelse) == 1 and type(s.orelse[0]) is ast.If:  # `else: if` prints as `elif`
            s = s.orelse[0]
            self.line(indent, f"elif {self.expr(s.test)}:")
            self.block(s.body, indent + "    ")
        if s.orelse:
            self.line(indent, "else:")
            self.block(s.orelse, indent + "    ")

    def _body_and_else(self, s, indent):
        self.block(s.body, indent + "    ")
        if s.orelse:
            self.line(indent, "else:")
            self.block(s.orelse, indent + "    ")


_EXPRESSIONS = {ast.Constant: _Printer.constant, ast.Tuple: _Printer.tuple_, ast.List: _Printer.list_,
                ast.UnaryOp: _Printer.unaryop, ast.BinOp: _Printer.binop, ast.Compare: _Printer.compare,
                ast.BoolOp: _Printer.boolop, ast.Attribute: _Printer.attribute, ast.Call: _Printer.call,
                ast.Subscript: _Printer.subscript, ast.Starred: _Printer.starred, ast.Slice: _Printer.slice_,
                ast.IfExp: _Printer.ifexp, ast.Dict: _Printer.dict_}
_STATEMENTS = {ast.Expr: _Printer.stmt_expr, ast.Assign: _Printer.stmt_assign, ast.AugAssign: _Printer.stmt_augassign,
               ast.Return: _Printer.stmt_return, ast.Pass: _Printer.stmt_pass, ast.Break: _Printer.stmt_break,
               ast.Continue: _Printer.stmt_continue, ast.FunctionDef: _Printer.stmt_def, ast.For: _Printer.stmt_for,
               ast.While: _Printer.stmt_while, ast.If: _Printer.stmt_if}


def _docstring(node):
    """A body's leading string statement, printed as `ast.unparse` prints a docstring (by its own, private, code)."""
    try:
        unparser = ast._Unparser()
        unparser._write_docstring(node)
    except AttributeError:  # a Python whose ast module is organised otherwise
        raise Unsupported("docstring") from None
    return "".join(unparser._source)


def _arguments(args):
    if any(a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a) \
            or args.defaults or any(args.kw_defaults):
        raise Unsupported("annotated parameters or defaults")
    parts = [a.arg for a in args.posonlyargs]
    if parts:
        parts[-1] += ", /"
    parts += [a.arg for a in args.args]
    if args.vararg or args.kwonlyargs:
        parts.append("*" + args.vararg.arg if args.vararg else "*")
    parts += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        parts.append("**" + args.kwarg.arg)
    return ", ".join(parts)


def expression(node):
    """`ast.unparse(node)` for an expression."""
    return _Printer().expr(node)


def lines(module):
    """`ast.unparse(module).splitlines()` for a module of the statements the emitter builds."""
    printer = _Printer()
    printer.block(module.body, "", docstring=True)
    return printer.out

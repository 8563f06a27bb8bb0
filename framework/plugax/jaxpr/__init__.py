"""The jaxpr IR, its printer, type checker and interpreter."""
from .ir import Var, DropVar, Literal, Atom, JaxprEqn, Jaxpr, ClosedJaxpr
from .check import JaxprTypeError, JaxprType, typecheck_jaxpr, check_call_operands
from .interpret import eval_jaxpr, jaxpr_as_fun

__all__ = ["Var", "DropVar", "Literal", "Atom", "JaxprEqn", "Jaxpr", "ClosedJaxpr",
           "JaxprTypeError", "JaxprType", "typecheck_jaxpr", "check_call_operands", "eval_jaxpr",
           "jaxpr_as_fun"]

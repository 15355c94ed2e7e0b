; Call sites: the callee expression and its argument list (or the one generator it is given
; unparenthesized: `sum(x for x in xs)`).

(call
  function: (_) @reference.call.callee
  arguments: [(argument_list) (generator_expression)] @reference.call.arguments) @reference.call

; Call sites: the callee expression and its argument list.

(call
  function: (_) @reference.call.callee
  arguments: (argument_list) @reference.call.arguments) @reference.call

; Exceptions raised: `raise E` makes an E when E is a class.

(raise_statement . (_) @raise.value) @raise

; Simple statements at the top level of a module or function body: they run in order, with
; no branch or loop around them within their scope.

(module
  [(expression_statement) (return_statement) (raise_statement) (decorated_definition)]
    @order.straight)

(function_definition
  body: (block
    [(expression_statement) (return_statement) (raise_statement) (decorated_definition)]
      @order.straight))

; Values leaving a function.

(return_statement (_) @return.value) @return

(yield (_) @return.value) @return

; A lambda's body is what it returns
(lambda body: (_) @return.value) @return

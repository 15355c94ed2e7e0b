; Values leaving a function.

(return_statement (_) @return.value) @return

(yield (_) @return.value) @return

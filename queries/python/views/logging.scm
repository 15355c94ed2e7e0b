; Calls that write a log line: `logger.info(...)`, `logging.warning(...)`, `self.log.debug(...)`,
; and `print(...)`. The message is the first argument; the rest are %-format values.

; -- a logger method -------------------------------------------------------------------------
(call
  function: (attribute
    object: [(identifier) (attribute)] @_logger
    attribute: (identifier) @log.level)
  arguments: (argument_list . (_) @log.message)
  (#match? @log.level "^(debug|info|warning|warn|error|critical|exception|fatal)$")
  (#match? @_logger "(?i)log")) @log.call

; -- print ---------------------------------------------------------------------------------
(call
  function: (identifier) @log.level
  arguments: (argument_list . (_) @log.message)
  (#match? @log.level "^(print|rank0_print|rank_print|print_rank0)$")) @log.call

"""Publishing the change feed to a message broker (STOMP 1.2, e.g. ActiveMQ).

``broker``     one STOMP connection: send events, wait for the broker's receipts
``publisher``  the loop that drains the outbox in commit order, its backoff, and
               the data-directory lock that keeps it to one per repository
``replay``     republishing retained events (``lsup-admin events replay``)

The events themselves (what is recorded, Fedora 6's message format) are
``lakesuperior.model.events``; see ``docs/events.md``.
"""

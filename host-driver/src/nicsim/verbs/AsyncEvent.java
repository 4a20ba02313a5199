package nicsim.verbs;

/** An asynchronous event (struct ibv_async_event): the type and the affected QP, CQ, SRQ or port (-1 if none). */
public record AsyncEvent(EventType type, int qpNum, int cqHandle, int srqHandle, int portNum) {}

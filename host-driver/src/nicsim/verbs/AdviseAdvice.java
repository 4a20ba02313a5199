package nicsim.verbs;

/** What ibv_advise_mr advises (enum ibv_advise_mr_advice). */
public enum AdviseAdvice {
    PREFETCH(0), PREFETCH_WRITE(1), PREFETCH_NO_FAULT(2);

    private final int value;

    AdviseAdvice(int value) { this.value = value; }

    /** libibverbs' number for this value. */
    public int value() { return value; }
}

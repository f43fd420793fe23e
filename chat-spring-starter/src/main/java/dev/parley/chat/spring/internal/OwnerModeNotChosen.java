package dev.parley.chat.spring.internal;

/**
 * Parley would have to take the owner of a request from a header anyone can send: nothing says how
 * callers are authenticated. Thrown at start-up; {@link OwnerModeFailureAnalyzer} explains what to set.
 */
public final class OwnerModeNotChosen extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String header;

    OwnerModeNotChosen(String header) {
        super("Parley cannot tell who calls its endpoints: Spring Security is not on the classpath and no owner "
                + "mode is chosen, and the " + header + " header can be sent by anyone. Set "
                + "parley.owner.mode=HEADER if a trusted proxy sets that header, set parley.owner.fixed for a "
                + "single-user demo, add Spring Security, or define an OwnerResolver bean.");
        this.header = header;
    }

    /** The owner header AUTO mode would have trusted. */
    public String header() {
        return header;
    }
}

package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link HostAction} is approved: its {@link ApprovalPolicy}, the description the person reads before
 * deciding, whether they may edit the arguments, and how long the approval waits.
 *
 * @param description what the call will do and why it needs approval, from the call (e.g. "Refunds order
 *     42 (€19.90) to the customer's card; this cannot be undone")
 * @param argumentsEditable whether the person may change the arguments before allowing the call
 * @param timeout how long the approval waits before it expires (the call then fails as "not approved in
 *     time"); null for as long as the run waits; a timeout that is not positive throws {@link ChatException}
 *     CONFIGURATION
 */
public record HostActionApproval(
        ApprovalPolicy policy,
        Function<HostActionCall, String> description,
        boolean argumentsEditable,
        @Nullable Duration timeout) {

    public HostActionApproval {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(description, "description");
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw ChatException.configuration("an approval timeout must be positive, got " + timeout);
        }
    }

    /** No approval: the handler runs at once. */
    public static HostActionApproval never() {
        return new HostActionApproval(ApprovalPolicy.NEVER, call -> "", false, null);
    }

    /** Every call is approved by the person, who reads {@code description}. */
    public static HostActionApproval always(Function<HostActionCall, String> description) {
        return new HostActionApproval(ApprovalPolicy.ALWAYS, description, false, null);
    }

    /** The first call per conversation is approved (once, or for the conversation). */
    public static HostActionApproval oncePerThread(Function<HostActionCall, String> description) {
        return new HostActionApproval(ApprovalPolicy.ONCE_PER_THREAD, description, false, null);
    }

    /** The same approval, letting the person edit the arguments before allowing the call. */
    public HostActionApproval withEditableArguments() {
        return new HostActionApproval(policy, description, true, timeout);
    }

    /** The same approval, expiring after {@code value}. */
    public HostActionApproval withTimeout(Duration value) {
        return new HostActionApproval(policy, description, argumentsEditable, Objects.requireNonNull(value, "timeout"));
    }
}

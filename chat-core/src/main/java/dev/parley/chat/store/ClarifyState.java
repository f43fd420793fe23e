package dev.parley.chat.store;

/** Where a stored clarify question stands. */
public enum ClarifyState {
    PENDING,
    ANSWERED,
    CANCELLED
}

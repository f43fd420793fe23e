package dev.parley.chat.model;

/** Thumbs up or down on an assistant message. */
public enum FeedbackRating {
    UP,
    DOWN
}

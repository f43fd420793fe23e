package dev.parley.chat.engine;

import org.jspecify.annotations.Nullable;

/**
 * A partial change to a thread: only the fields that were set change. Setting the model or the skill to
 * null clears it. Built with {@link #builder()}; immutable.
 */
public final class ThreadUpdate {
    private final boolean titleSet;
    private final @Nullable String title;
    private final boolean modelSet;
    private final @Nullable String modelId;
    private final boolean skillSet;
    private final @Nullable String skill;
    private final @Nullable Boolean archived;

    private ThreadUpdate(Builder b) {
        this.titleSet = b.titleSet;
        this.title = b.title;
        this.modelSet = b.modelSet;
        this.modelId = b.modelId;
        this.skillSet = b.skillSet;
        this.skill = b.skill;
        this.archived = b.archived;
    }

    public static Builder builder() {
        return new Builder();
    }

    public boolean titleSet() {
        return titleSet;
    }

    public @Nullable String title() {
        return title;
    }

    public boolean modelSet() {
        return modelSet;
    }

    public @Nullable String modelId() {
        return modelId;
    }

    public boolean skillSet() {
        return skillSet;
    }

    public @Nullable String skill() {
        return skill;
    }

    /** True to archive, false to restore, null to leave as is. */
    public @Nullable Boolean archived() {
        return archived;
    }

    /** Not thread-safe. */
    public static final class Builder {
        private boolean titleSet;
        private @Nullable String title;
        private boolean modelSet;
        private @Nullable String modelId;
        private boolean skillSet;
        private @Nullable String skill;
        private @Nullable Boolean archived;

        /** A new title; must not be blank. */
        public Builder title(String value) {
            titleSet = true;
            title = value;
            return this;
        }

        public Builder modelId(@Nullable String value) {
            modelSet = true;
            modelId = value;
            return this;
        }

        public Builder skill(@Nullable String value) {
            skillSet = true;
            skill = value;
            return this;
        }

        public Builder archived(boolean value) {
            archived = value;
            return this;
        }

        public ThreadUpdate build() {
            return new ThreadUpdate(this);
        }
    }
}

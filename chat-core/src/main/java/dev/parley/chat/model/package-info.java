/**
 * The unified message model, the same whatever the runtime: threads, runs and the
 * sealed {@link dev.parley.chat.model.Message} family. Everything here is an immutable value, safe to
 * share between threads.
 *
 * <h2>Evolution</h2>
 * New message kinds and new record components may be added in minor versions. A new component comes
 * with the previous constructor kept, and the JSON codec ignores unknown fields and unknown kinds on
 * read, so images or attachments can be added later without breaking callers. Code that dispatches on
 * {@link dev.parley.chat.model.Message#kind()} should keep a default branch.
 */
@NullMarked
package dev.parley.chat.model;

import org.jspecify.annotations.NullMarked;

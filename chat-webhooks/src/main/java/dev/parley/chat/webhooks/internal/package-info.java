/** The webhooks module's internals: signing and payloads. Not an API: may change in any release. */
@NullMarked
package dev.parley.chat.webhooks.internal;

import org.jspecify.annotations.NullMarked;

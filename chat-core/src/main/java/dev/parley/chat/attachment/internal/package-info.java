/** How attachments are checked and read: media-type sniffing, file names, bounded digesting streams. */
@NullMarked
package dev.parley.chat.attachment.internal;

import org.jspecify.annotations.NullMarked;

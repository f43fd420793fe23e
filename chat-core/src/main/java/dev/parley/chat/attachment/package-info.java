/**
 * Files and images a person sends with a message: {@link dev.parley.chat.engine.ChatAttachments} uploads,
 * finds and reads them for an owner; {@link dev.parley.chat.attachment.AttachmentStore} keeps what is known
 * of each one with the chat's data, {@link dev.parley.chat.attachment.BlobStore} keeps the bytes (in the
 * database by default; a host may put them elsewhere); {@link dev.parley.chat.attachment.AttachmentLimits}
 * bounds them.
 */
@NullMarked
package dev.parley.chat.attachment;

import org.jspecify.annotations.NullMarked;

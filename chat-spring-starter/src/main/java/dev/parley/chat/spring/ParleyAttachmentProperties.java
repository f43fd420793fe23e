package dev.parley.chat.spring;

import dev.parley.chat.attachment.AttachmentLimits;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Bounds on what people may attach to messages ({@code parley.attachments.*}); the defaults are
 * {@link AttachmentLimits#defaults()}'s. Uploads sent as {@code multipart/form-data} also pass the servlet
 * container's own multipart limits ({@code spring.servlet.multipart.max-file-size}, 1 MB unless set) first;
 * uploads sent as the raw request body do not.
 */
@ConfigurationProperties(prefix = "parley.attachments")
public class ParleyAttachmentProperties {
    private static final AttachmentLimits DEFAULTS = AttachmentLimits.defaults();

    /** The largest file. */
    private DataSize maxFileSize = DataSize.ofBytes(DEFAULTS.maxFileBytes());
    /** The most files one message may carry. */
    private int maxFilesPerMessage = DEFAULTS.maxFilesPerMessage();
    /** The most bytes one message's files may hold together. */
    private DataSize maxMessageSize = DataSize.ofBytes(DEFAULTS.maxBytesPerMessage());
    /** The most bytes one owner's files may hold (equal files counted once). */
    private DataSize maxOwnerSize = DataSize.ofBytes(DEFAULTS.maxBytesPerOwner());
    /** The media types that may be attached ({@code image/*} for a family). */
    private Set<String> allowedTypes = new LinkedHashSet<>(AttachmentLimits.DEFAULT_TYPES);

    /** These settings as the engine's limits. */
    public AttachmentLimits toLimits() {
        return AttachmentLimits.builder().maxFileBytes(maxFileSize.toBytes()).maxFilesPerMessage(maxFilesPerMessage)
                .maxBytesPerMessage(maxMessageSize.toBytes()).maxBytesPerOwner(maxOwnerSize.toBytes())
                .allowedTypes(allowedTypes).build();
    }

    public DataSize getMaxFileSize() {
        return maxFileSize;
    }

    public void setMaxFileSize(DataSize maxFileSize) {
        this.maxFileSize = maxFileSize;
    }

    public int getMaxFilesPerMessage() {
        return maxFilesPerMessage;
    }

    public void setMaxFilesPerMessage(int maxFilesPerMessage) {
        this.maxFilesPerMessage = maxFilesPerMessage;
    }

    public DataSize getMaxMessageSize() {
        return maxMessageSize;
    }

    public void setMaxMessageSize(DataSize maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    public DataSize getMaxOwnerSize() {
        return maxOwnerSize;
    }

    public void setMaxOwnerSize(DataSize maxOwnerSize) {
        this.maxOwnerSize = maxOwnerSize;
    }

    public Set<String> getAllowedTypes() {
        return allowedTypes;
    }

    public void setAllowedTypes(Set<String> allowedTypes) {
        this.allowedTypes = allowedTypes;
    }
}

package dev.parley.chat.spring.internal.tomcat;

import dev.parley.chat.ChatException;
import dev.parley.chat.spring.ParleyTomcatProperties;
import org.apache.coyote.http11.Http11NioProtocol;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.tomcat.TomcatProtocolHandlerCustomizer;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.core.Ordered;
import org.springframework.util.unit.DataSize;

/**
 * Applies {@code parley.web.tomcat.*} to the host's Tomcat: nothing for a setting left unset.
 *
 * @see ParleyTomcatProperties
 */
public final class TomcatBuffers implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {
    static final int MIN_BYTES = 256;
    static final int MAX_BYTES = 1024 * 1024;

    private final @Nullable Integer connectionBuffer;
    private final @Nullable Integer responseBuffer;

    /** @throws IllegalStateException for a size outside 256 B – 1 MB */
    public TomcatBuffers(ParleyTomcatProperties properties) {
        this.connectionBuffer = bytes("connection-buffer-size", properties.getConnectionBufferSize());
        this.responseBuffer = bytes("response-buffer-size", properties.getResponseBufferSize());
    }

    private static @Nullable Integer bytes(String name, @Nullable DataSize size) {
        if (size == null) {
            return null;
        }
        if (size.toBytes() < MIN_BYTES || size.toBytes() > MAX_BYTES) {
            throw ChatException.configuration("parley.web.tomcat." + name + " must be between 256B and 1MB, got " + size);
        }
        return (int) size.toBytes();
    }

    /** @throws IllegalStateException if a response buffer size is set and the host chose another protocol */
    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        Integer connection = connectionBuffer;
        if (connection != null) {
            String value = Integer.toString(connection);
            factory.addConnectorCustomizers((TomcatConnectorCustomizer) connector -> {
                for (String property : new String[] {"socket.appReadBufSize", "socket.appWriteBufSize", "maxTrailerSize"}) {
                    if (!connector.setProperty(property, value)) {
                        throw ChatException.configuration("Tomcat's connector did not take " + property + " (from "
                                + "parley.web.tomcat.connection-buffer-size)");
                    }
                }
            });
        }
        Integer response = responseBuffer;
        if (response != null) {
            String protocol = factory.getProtocol();
            if (!protocol.equals(Http11NioProtocol.class.getName())
                    && !protocol.equals(SizedBufferHttp11NioProtocol.class.getName())) {
                throw ChatException.configuration("parley.web.tomcat.response-buffer-size needs Tomcat's default protocol "
                        + Http11NioProtocol.class.getName() + ", but the server is set to " + protocol);
            }
            factory.setProtocol(SizedBufferHttp11NioProtocol.class.getName());
            factory.addProtocolHandlerCustomizers((TomcatProtocolHandlerCustomizer<?>) handler -> {
                if (handler instanceof SizedBufferHttp11NioProtocol sized) {
                    sized.setResponseBufferSize(response);
                }
            });
        }
    }

    /** After Spring Boot's own customizer, so that the protocol it read from {@code server.*} is seen. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}

package dev.parley.chat.store.jdbi.internal;

import java.lang.annotation.Annotation;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.Type;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.sqlobject.customizer.SqlStatementCustomizerFactory;
import org.jdbi.v3.sqlobject.customizer.SqlStatementCustomizingAnnotation;
import org.jdbi.v3.sqlobject.customizer.SqlStatementParameterCustomizer;

/**
 * Binds a DAO method's parameter — each element of a {@code @SqlBatch}, or the one value of an
 * {@code @SqlUpdate} — with a {@link Binder}: plain {@code bind(name, value)} calls, exactly what the fluent
 * API makes. Jdbi creates the binder once per method, when it builds the DAO's handlers; a row then costs no
 * reflection (Jdbi's {@code @BindMethods} would look each accessor up, and an unannotated parameter its
 * binding, for every row).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@SqlStatementCustomizingAnnotation(BindRow.Factory.class)
public @interface BindRow {
    /** The binder; a class with a public no-argument constructor. */
    Class<? extends Binder<?>> value();

    /** Binds the named parameters of one row. */
    @FunctionalInterface
    interface Binder<T> {
        void bind(SqlStatement<?> statement, T row);
    }

    /** Jdbi's hook: turns the annotation into a parameter customizer calling the binder. */
    final class Factory implements SqlStatementCustomizerFactory {
        @Override
        public SqlStatementParameterCustomizer createForParameter(Annotation annotation, Class<?> sqlObjectType,
                Method method, Parameter param, int index, Type paramType) {
            Binder<Object> binder = instantiate(((BindRow) annotation).value());
            return (statement, row) -> binder.bind(statement, row);
        }

        @SuppressWarnings("unchecked") // the binder's type is the parameter's, as the DAO declares it
        private static Binder<Object> instantiate(Class<? extends Binder<?>> type) {
            try {
                return (Binder<Object>) type.getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot create the row binder " + type.getName(), e);
            }
        }
    }
}

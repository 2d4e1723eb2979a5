//! The binding half of a generated `__rpc_invoke_*` function, written
//! once: the service taken out of its instance and each argument bound in
//! order. The generated function matches on the outcome and calls the
//! method.
//!
//! A method with up to eight arguments calls `bind<N>`, generic over its
//! service and its argument types only: the compiler checks these bodies
//! once for the whole program, and generates one copy per service and
//! list of argument types (the methods of a service that take the same
//! types share it), instead of one binding sequence per method.
//! Each argument's binder is named by the macro as before
//! (`<T as Arg>::bind`, at the type's span), so a type that cannot be an
//! argument gets the same one error on its own token.

use serde_json::{Map, Value};

use crate::context::Context;
use crate::descriptor::ServiceInstance;
use crate::error::RpcError;

/// An argument's binder: `<T as Arg>::bind`.
pub type Bind<T> = fn(&str, &mut Map<String, Value>, &str, Option<fn() -> T>, &Context) -> Result<T, RpcError>;

/// The service behind an instance: `downcast::<S>` (borrowed) or
/// `downcast_arc::<S>` (shared, for async methods).
pub type Downcast<'a, S> = fn(&'a ServiceInstance) -> Result<S, RpcError>;

macro_rules! binders {
    ($($name:ident($($ty:ident $value:ident $bind:ident $param:ident $default:ident),*);)*) => {$(
        /// Takes the service out of `instance` and binds each argument from
        /// `params` (by its binder, name and default), in order; the first
        /// that fails is the error.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        pub fn $name<'a, S, $($ty),*>(
            instance: &'a ServiceInstance,
            downcast: Downcast<'a, S>,
            mut params: Map<String, Value>,
            context: &Context,
            method: &str,
            $($bind: Bind<$ty>, $param: &str, $default: Option<fn() -> $ty>,)*
        ) -> Result<(S, $($ty),*), RpcError> {
            let service = downcast(instance)?;
            $(let $value = $bind(method, &mut params, $param, $default, context)?;)*
            Ok((service, $($value),*))
        }
    )*};
}

// A method with more arguments than the last of these gets the same body
// written out by the macro (`MAX_ARGS` in rpc-macros' codegen).
binders! {
    bind0();
    bind1(A0 a0 b0 n0 d0);
    bind2(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1);
    bind3(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2);
    bind4(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3);
    bind5(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4);
    bind6(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5);
    bind7(
        A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5,
        A6 a6 b6 n6 d6
    );
    bind8(
        A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5,
        A6 a6 b6 n6 d6, A7 a7 b7 n7 d7
    );
}

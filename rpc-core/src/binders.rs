//! The body of a generated `__rpc_invoke_*` function, written once: the
//! service taken out of its instance, each argument bound in order, and
//! (`call<N>`, for a method that is not `async`) the method called and its
//! outcome handed to its return type's `finish`; an `async` method's
//! function hands `bind<N>`'s outcome (the service shared, `Arc<S>`, and
//! the arguments as a tuple), the method and its `finish` to `call_async`,
//! which boxes the future.
//!
//! `call<N>` and `call_async` are `#[track_caller]`, and the macro writes
//! their call at the method's return type: `finish` records an error the
//! method's error converts into there (`data.location` in dev). The
//! location is passed as a constant, so no call that could unwind comes
//! before the arguments are handed over (it would need a cleanup path in
//! every generated function). `finish` is passed as itself, a function
//! item: generic over the lifetime of the service's borrow, so a method
//! may return a value that borrows its service.
//!
//! `call_async` is one generic function for every `async` method: its
//! `async` block is checked once for the program (before, each method had
//! an `async` block of its own, the most costly part of its code for the
//! compiler). The method's future is known to be `Send` through
//! [`AsyncMethod`], implemented for each function whose future is: a
//! method whose future is not gets the compiler's "future cannot be sent
//! between threads safely" on its name.
//!
//! A method with up to eight arguments calls `call<N>` or `bind<N>`,
//! generic over its service, argument and return types only: the compiler
//! checks these bodies once for the whole program, and generates one copy
//! per service and signature (the methods of a service with the same
//! signature share it), instead of one binding sequence per method.
//! Each argument's binder is named by the macro as before
//! (`<T as Arg>::bind`, at the type's span), so a type that cannot be an
//! argument gets the same one error on its own token.

use std::any::Any;
use std::panic::Location;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::Context;
use crate::descriptor::{InvokeResult, Invoked, ServiceInstance};
use crate::error::RpcError;

/// A method's return value, or the error that kept it from being called
/// (its service or an argument could not be bound): what a generated
/// `finish` function takes.
pub type Outcome<T> = Result<T, RpcError>;

/// An argument's binder: `<T as Arg>::bind`.
pub type Bind<T> = fn(&str, &mut Map<String, Value>, &str, Option<fn() -> T>, &Context) -> Result<T, RpcError>;

/// The arguments of a call, by name: the third argument of a generated
/// `__rpc_invoke_*` function.
pub type Args = Map<String, Value>;

/// The service behind an instance, borrowed (sync methods).
pub fn downcast<T: Any>(instance: &ServiceInstance) -> Result<&T, RpcError> {
    instance.downcast_ref::<T>().ok_or_else(|| wrong_instance::<T>())
}

/// The service behind an instance, shared (async methods move it into their future).
pub fn downcast_arc<T: Any + Send + Sync>(instance: &ServiceInstance) -> Result<Arc<T>, RpcError> {
    Arc::clone(instance).downcast::<T>().map_err(|_| wrong_instance::<T>())
}

/// What an `async` method's invoke function returns: the boxed future that
/// calls `method` with the service and arguments `bind<N>` bound and hands
/// its outcome to `finish` (its return type's finish function, with the
/// location of this call, the method's return type, to record an error
/// at); or the error that kept the method from being called.
///
/// One generic function for every `async` method: the compiler checks one
/// `async` block for the program, not one per method. `finish` takes the
/// outcome for any lifetime of the service's borrow, so a method may return
/// a value that borrows its service.
#[track_caller]
pub fn call_async<S: Send + Sync + 'static, A: Send + 'static, M, F>(
    bound: Result<(Arc<S>, A), RpcError>,
    method: M,
    finish: F,
) -> Invoked
where
    M: for<'s> AsyncMethod<'s, S, A> + Send + 'static,
    F: for<'s> FnOnce(Outcome<<M as AsyncMethod<'s, S, A>>::Output>, &'static Location<'static>) -> InvokeResult
        + Send
        + 'static,
{
    match bound {
        Ok((service, args)) => {
            let at = Location::caller();
            Invoked::Pending(Box::pin(async move { finish(Ok(method.call(&service, args).await), at) }))
        }
        Err(error) => Invoked::Ready(Err(error)),
    }
}

/// An `async` method of `S` that takes the arguments `A` (a tuple), with
/// its service borrowed for `'s`: what [`call_async`] calls. Implemented
/// for every function whose future is `Send`, so that a shared generic
/// function can box it as a `Send` future; a method whose future is not
/// gets its error where its invoke function names it.
pub trait AsyncMethod<'s, S: 's, A> {
    /// What the method returns.
    type Output;
    /// The method's future.
    type Future: Future<Output = Self::Output> + Send + 's;

    /// Calls the method.
    fn call(&self, service: &'s S, args: A) -> Self::Future;
}

fn wrong_instance<T>() -> RpcError {
    RpcError::internal(format!("service instance is not a `{}`", std::any::type_name::<T>()))
}

macro_rules! binders {
    ($($name:ident $call:ident($($ty:ident $value:ident $bind:ident $param:ident $default:ident),*);)*) => {$(
        /// Takes the service out of `instance`, shared (an `async` method's
        /// future owns it), and binds each argument from `params` (by its
        /// binder, name and default), in order, into a tuple for
        /// [`call_async`]; the first that fails is the error.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        pub fn $name<S: Any + Send + Sync, $($ty),*>(
            instance: &ServiceInstance,
            mut params: Args,
            context: &Context,
            method: &str,
            $($bind: Bind<$ty>, $param: &str, $default: Option<fn() -> $ty>,)*
        ) -> Result<(Arc<S>, ($($ty,)*)), RpcError> {
            let service = downcast_arc::<S>(instance)?;
            $(let $value = $bind(method, &mut params, $param, $default, context)?;)*
            Ok((service, ($($value,)*)))
        }

        /// Takes the service out of `instance`, binds each argument from
        /// `params` (by its binder, name and default), in order, calls
        /// `method` with them and hands the outcome to `finish` (its return
        /// type's), with where this is called: the method's return type,
        /// where `finish` records an error. The first binding that fails is
        /// the error.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        #[track_caller]
        pub fn $call<'a, S: Any, R, $($ty),*>(
            instance: &'a ServiceInstance,
            mut params: Args,
            context: &Context,
            name: &str,
            $($bind: Bind<$ty>, $param: &str, $default: Option<fn() -> $ty>,)*
            method: fn(&'a S, $($ty),*) -> R,
            finish: fn(Outcome<R>, &'static Location<'static>) -> InvokeResult,
        ) -> InvokeResult {
            let at = Location::caller();
            let outcome = (|| {
                let service = downcast::<S>(instance)?;
                $(let $value = $bind(name, &mut params, $param, $default, context)?;)*
                Ok(method(service, $($value),*))
            })();
            finish(outcome, at)
        }

        impl<'s, S: 's, G, T, $($ty),*> AsyncMethod<'s, S, ($($ty,)*)> for G
        where
            G: Fn(&'s S, $($ty),*) -> T,
            T: Future + Send + 's,
        {
            type Output = T::Output;
            type Future = T;

            fn call(&self, service: &'s S, ($($value,)*): ($($ty,)*)) -> T {
                self(service, $($value),*)
            }
        }
    )*};
}

// A method with more arguments than the last of these gets the same body
// written out by the macro (`MAX_ARGS` in rpc-macros' codegen).
binders! {
    bind0 call0();
    bind1 call1(A0 a0 b0 n0 d0);
    bind2 call2(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1);
    bind3 call3(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2);
    bind4 call4(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3);
    bind5 call5(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4);
    bind6 call6(A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5);
    bind7 call7(
        A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5,
        A6 a6 b6 n6 d6
    );
    bind8 call8(
        A0 a0 b0 n0 d0, A1 a1 b1 n1 d1, A2 a2 b2 n2 d2, A3 a3 b3 n3 d3, A4 a4 b4 n4 d4, A5 a5 b5 n5 d5,
        A6 a6 b6 n6 d6, A7 a7 b7 n7 d7
    );
}

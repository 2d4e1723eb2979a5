//! The body of a generated `__rpc_invoke_*` function, written once: the
//! service taken out of its instance, each argument bound in order, and
//! (`call<N>`, for a method that is not `async`) the method called and its
//! outcome handed to its return type's `finish`; an `async` method's
//! function hands `bind<N>`'s outcome (the service, borrowed for the
//! invocation, and the arguments as a tuple), the method and its `finish`
//! to `call_async`, which boxes the future.
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
//! A method with up to eight arguments calls `call<N>` or `bind<N>`
//! (`call_defaults<N>`, `bind_defaults<N>` when an argument has a
//! default), generic over its service, argument and return types only:
//! the compiler checks these bodies once for the whole program, and
//! generates one copy per service and signature (the methods of a service
//! with the same signature share it), instead of one binding sequence per
//! method. Each argument is bound by its type's `Arg::bind`; the macro
//! names the argument types once, in the call's turbofish, each at its own
//! span, so a type that cannot be an argument gets one error on its own
//! token. The method's name and its arguments' names are read from its
//! descriptor, which every invoke function is given, and asked for its
//! `Shape`, the same code describes the arguments (their schema functions
//! and kinds): the method's own code holds no string, no binder and no
//! schema for the compiler to check per method.

use std::any::Any;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll, ready};

use serde_json::{Map, Value};

use crate::__private::Arg;
use crate::descriptor::{ArgShape, Invocation, InvokeResult, Invoked, MethodDescriptor, ServiceInstance};
use crate::error::RpcError;

/// What `bind<N>` hands to [`call_async`]: the service, borrowed for the
/// invocation, and the arguments (a tuple); the error that kept the method
/// from being called; or, asked for it ([`Invocation::Shape`]), its
/// arguments' shapes.
pub enum Bound<'a, S, A> {
    /// The service and the arguments.
    Args(&'a S, A),
    /// The service or an argument could not be bound.
    Failed(RpcError),
    /// The arguments' shapes.
    Shape(&'static [ArgShape]),
}

/// A method's return value, or the error that kept it from being called
/// (its service or an argument could not be bound): what a generated
/// `finish` function takes.
pub type Outcome<T> = Result<T, RpcError>;

/// The arguments of a call, by name: the third argument of a generated
/// `__rpc_invoke_*` function.
pub type Args = Map<String, Value>;

/// The service behind an instance, borrowed for the invocation.
pub fn downcast<T: Any>(instance: &ServiceInstance) -> Result<&T, RpcError> {
    instance.downcast_ref::<T>().ok_or_else(|| wrong_instance::<T>())
}

/// What an `async` method's invoke function returns: the boxed future that
/// calls `method` with the service and arguments `bind<N>` bound and hands
/// its outcome to `finish` (its return type's finish function, with the
/// location of this call, the method's return type, to record an error
/// at); or the error that kept the method from being called.
///
/// One generic function for every `async` method, and the future is
/// `Finishing`, written by hand: the compiler checks no `async` block per
/// method, and generates a plain `poll` and drop for each instead of a
/// state machine's (BENCHMARKS.md, run 36). The future borrows the service
/// for as long as the invocation does (the executor holds the service
/// while it awaits the call): no shared pointer is cloned per call.
/// `finish` takes the outcome for the lifetime of the service's borrow, so
/// a method may return a value that borrows its service.
#[track_caller]
pub fn call_async<'a, S: Sync + 'a, A: Send + 'a, M, F>(bound: Bound<'a, S, A>, method: M, finish: F) -> Invoked<'a>
where
    M: for<'s> AsyncMethod<'s, S, A>,
    F: for<'s> FnOnce(Outcome<<M as AsyncMethod<'s, S, A>>::Output>, &'static Location<'static>) -> InvokeResult
        + Send
        + 'a,
{
    match bound {
        Bound::Args(service, args) => {
            let at = Location::caller();
            Invoked::Pending(Box::pin(Finishing { future: method.call(service, args), finish: Some(finish), at }))
        }
        Bound::Failed(error) => Invoked::Ready(Err(error)),
        Bound::Shape(shape) => Invoked::Shape(shape),
    }
}

pin_project_lite::pin_project! {
    /// An `async` method's future, and what its outcome becomes: polls the
    /// method's future and, once it is done, hands its output to `finish`.
    struct Finishing<Fut, F> {
        #[pin]
        future: Fut,
        finish: Option<F>,
        at: &'static Location<'static>,
    }
}

impl<Fut: Future, F: FnOnce(Outcome<Fut::Output>, &'static Location<'static>) -> InvokeResult> Future
    for Finishing<Fut, F>
{
    type Output = InvokeResult;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<InvokeResult> {
        let this = self.project();
        // Polled again after it was done: an error, not a panic (the
        // method's own future would panic if it were polled again).
        if this.finish.is_none() {
            return Poll::Ready(Err(polled_again()));
        }
        let output = ready!(this.future.poll(cx));
        Poll::Ready(match this.finish.take() {
            Some(finish) => finish(Ok(output), this.at),
            None => Err(polled_again()),
        })
    }
}

/// What a [`Finishing`] polled again after it completed answers. A function
/// of its own, not a closure in `poll`: a closure there would be one more
/// function for the compiler to generate per `async` method.
fn polled_again() -> RpcError {
    RpcError::internal("a method's future was polled after it completed")
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
    ($($name:ident $name_d:ident $call:ident $call_d:ident($($ty:ident $value:ident $default:ident $index:literal),*);)*) => {$(
        /// Takes the service out of the invocation's instance, borrowed
        /// for the invocation (an `async` method's future borrows it as
        /// long), and binds each argument from its parameters by its type's
        /// `Arg::bind` and its name in the method's descriptor, in order,
        /// into a tuple for [`call_async`] (the first that fails is the
        /// error); or gives the arguments' shapes.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        pub fn $name<S: Any + Send + Sync, $($ty: Arg),*>(invocation: Invocation<'_>) -> Bound<'_, S, ($($ty,)*)> {
            $name_d::<S, $($ty),*>(invocation, $(None::<fn() -> $ty>),*)
        }

        /// [`bind0`]'s kind, for a method with a default: each argument's
        /// default, in order.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        pub fn $name_d<S: Any + Send + Sync, $($ty: Arg),*>(
            invocation: Invocation<'_>,
            $($default: Option<fn() -> $ty>,)*
        ) -> Bound<'_, S, ($($ty,)*)> {
            let (instance, mut params, context, descriptor) = match invocation {
                Invocation::Call { instance, params, context, method } => (instance, params, context, method),
                Invocation::Shape => return Bound::Shape(const { &[$(ArgShape::of::<$ty>()),*] }),
            };
            let bound = (|| {
                let service = downcast::<S>(instance)?;
                $(let $value = $ty::bind(descriptor.name, &mut params, param_name(descriptor, $index)?, $default, context)?;)*
                Ok((service, ($($value,)*)))
            })();
            match bound {
                Ok((service, args)) => Bound::Args(service, args),
                Err(error) => Bound::Failed(error),
            }
        }

        /// Takes the service out of the invocation's instance, binds each
        /// argument from its parameters by its type's `Arg::bind` and its
        /// name in the method's descriptor, in order, calls `method` with
        /// them and hands the outcome to `finish` (its return type's), with
        /// where this is called: the method's return type, where `finish`
        /// records an error. The first binding that fails is the error.
        /// Or gives the arguments' shapes.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        #[track_caller]
        pub fn $call<'a, S: Any, R, $($ty: Arg),*>(
            invocation: Invocation<'a>,
            method: fn(&'a S, $($ty),*) -> R,
            finish: fn(Outcome<R>, &'static Location<'static>) -> InvokeResult,
        ) -> Invoked<'a> {
            $call_d::<S, R, $($ty),*>(invocation, $(None::<fn() -> $ty>,)* method, finish)
        }

        /// [`call0`]'s kind, for a method with a default: each argument's
        /// default, in order.
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut, unused_variables)]
        #[track_caller]
        pub fn $call_d<'a, S: Any, R, $($ty: Arg),*>(
            invocation: Invocation<'a>,
            $($default: Option<fn() -> $ty>,)*
            method: fn(&'a S, $($ty),*) -> R,
            finish: fn(Outcome<R>, &'static Location<'static>) -> InvokeResult,
        ) -> Invoked<'a> {
            let (instance, mut params, context, descriptor) = match invocation {
                Invocation::Call { instance, params, context, method } => (instance, params, context, method),
                Invocation::Shape => return Invoked::Shape(const { &[$(ArgShape::of::<$ty>()),*] }),
            };
            let at = Location::caller();
            let outcome = (|| {
                let service = downcast::<S>(instance)?;
                $(let $value = $ty::bind(descriptor.name, &mut params, param_name(descriptor, $index)?, $default, context)?;)*
                Ok(method(service, $($value),*))
            })();
            Invoked::Ready(finish(outcome, at))
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

/// The name of argument `index` in `descriptor` (the macro wrote both
/// from the same signature, so it is there; a descriptor that does not
/// match its invoke function is an internal error, not a panic).
fn param_name(descriptor: &MethodDescriptor, index: usize) -> Result<&'static str, RpcError> {
    match descriptor.params.get(index) {
        Some(param) => Ok(param.name),
        None => {
            Err(RpcError::internal(format!("method `{}` has no argument {index} in its descriptor", descriptor.name)))
        }
    }
}

// A method with more arguments than the last of these gets the same body
// written out by the macro (`MAX_ARGS` in rpc-macros' codegen).
binders! {
    bind0 bind_defaults0 call0 call_defaults0();
    bind1 bind_defaults1 call1 call_defaults1(A0 a0 d0 0);
    bind2 bind_defaults2 call2 call_defaults2(A0 a0 d0 0, A1 a1 d1 1);
    bind3 bind_defaults3 call3 call_defaults3(A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2);
    bind4 bind_defaults4 call4 call_defaults4(A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2, A3 a3 d3 3);
    bind5 bind_defaults5 call5 call_defaults5(A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2, A3 a3 d3 3, A4 a4 d4 4);
    bind6 bind_defaults6 call6 call_defaults6(A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2, A3 a3 d3 3, A4 a4 d4 4, A5 a5 d5 5);
    bind7 bind_defaults7 call7 call_defaults7(
        A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2, A3 a3 d3 3, A4 a4 d4 4, A5 a5 d5 5, A6 a6 d6 6
    );
    bind8 bind_defaults8 call8 call_defaults8(
        A0 a0 d0 0, A1 a1 d1 1, A2 a2 d2 2, A3 a3 d3 3, A4 a4 d4 4, A5 a5 d5 5, A6 a6 d6 6, A7 a7 d7 7
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private::{METHOD, unit_outcome};
    use crate::call::transport::Transport;
    use crate::context::Context;
    use std::sync::Arc;

    struct Counter;

    impl Counter {
        fn add(&self, _amount: u32, _context: Context) {}
    }

    fn call(descriptor: &MethodDescriptor, params: Value) -> InvokeResult {
        let instance: ServiceInstance = Arc::new(Counter);
        let Value::Object(params) = params else { unreachable!("an object") };
        let context = Context::traced(Transport::JsonRpc, descriptor.name);
        let invocation = Invocation::Call { instance: &instance, params, context: &context, method: descriptor };
        match call2::<_, _, u32, Context>(invocation, Counter::add, unit_outcome) {
            Invoked::Ready(result) => result,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_shared_code_describes_the_arguments_it_binds() {
        let Invoked::Shape(shapes) = call2::<Counter, _, u32, Context>(Invocation::Shape, Counter::add, unit_outcome)
        else {
            panic!("a shape")
        };
        assert_eq!(shapes.iter().map(|shape| shape.is_param).collect::<Vec<_>>(), [true, false]);
        let mut generator = schemars::SchemaGenerator::default();
        assert!((shapes[0].schema)(&mut generator).is_some() && (shapes[1].schema)(&mut generator).is_none());
        let Bound::Shape(shapes) = bind2::<Counter, u32, Context>(Invocation::Shape) else { panic!("a shape") };
        assert_eq!(shapes.len(), 2);
    }

    #[test]
    fn arguments_are_bound_under_the_names_the_descriptor_gives() {
        const AMOUNT: [crate::descriptor::ParamDescriptor; 2] = [
            crate::descriptor::ParamDescriptor { name: "amount", ..crate::__private::PARAM },
            crate::descriptor::ParamDescriptor { name: "context", is_param: false, ..crate::__private::PARAM },
        ];
        let descriptor = MethodDescriptor { name: "Counter.add", params: &AMOUNT, ..METHOD };
        assert!(call(&descriptor, serde_json::json!({"amount": 2})).is_ok());
        let error = call(&descriptor, serde_json::json!({"amount": "two"})).expect_err("a string is no u32");
        assert!(error.message().starts_with("Invalid params for Counter.add: amount: "), "{error:?}");
    }

    #[test]
    fn a_descriptor_without_the_argument_is_an_internal_error_not_a_panic() {
        let descriptor = MethodDescriptor { name: "Counter.add", ..METHOD };
        let error = call(&descriptor, serde_json::json!({"amount": 2})).expect_err("no name for the argument");
        assert_eq!(error.code(), RpcError::internal("").code(), "{error:?}");
        // The cause is kept for the logs (an internal error does not show it to the client).
        assert!(format!("{error:?}").contains("`Counter.add` has no argument 0"), "{error:?}");
    }

    struct Doubler;

    impl Doubler {
        async fn double(&self, n: u32) -> u32 {
            std::future::ready(()).await;
            n * 2
        }
    }

    fn finish_u32(outcome: Outcome<u32>, _at: &'static Location<'static>) -> InvokeResult {
        outcome.and_then(|n| {
            serde_json::value::RawValue::from_string(n.to_string()).map_err(|e| RpcError::internal(e.to_string()))
        })
    }

    #[test]
    fn an_async_methods_future_finishes_its_output_once_and_is_an_error_when_polled_again() {
        let service = Doubler;
        let Invoked::Pending(mut future) = call_async(Bound::Args(&service, (21,)), Doubler::double, finish_u32) else {
            panic!("a future")
        };
        let mut cx = TaskContext::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(result)) => assert_eq!(result.get(), "42"),
            other => panic!("{other:?}"),
        }
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(Err(error)) => assert_eq!(error.code(), RpcError::internal("").code()),
            other => panic!("{other:?}"),
        }
        let Invoked::Ready(Err(error)) =
            call_async(Bound::<Doubler, (u32,)>::Failed(RpcError::internal("no")), Doubler::double, finish_u32)
        else {
            panic!("the error")
        };
        assert!(format!("{error:?}").contains("no"));
    }
}

//! A tiny stack.

use std::fmt;

/// A last-in, first-out stack.
#[derive(Debug, Default)]
pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    /// Pushes a value on top.
    pub fn push(&mut self, value: T) {
        self.items.push(value);
    }

    /// Pops the top value.
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop()
    }
}

impl fmt::Display for Stack<i32> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} items", self.items.len())
    }
}

pub trait Peek { fn peek(&self) -> Option<&i32>; }

mod util {
    pub fn helper() -> u8 { 1 }
}

enum Shape { Circle(f64), Square(f64) }

macro_rules! square { ($x:expr) => { $x * $x }; }

mod builtin;

/**
 * given(events).when(command).then(events) for pure deciders, after emmett's
 * DeciderSpecification: no I/O, time and ids arrive inside the command.
 */
export interface Decider<State, Command, Event> {
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
  decide: (command: Command, state: State) => Event[];
}

export function deciderSpec<State, Command, Event>(decider: Decider<State, Command, Event>) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const run = () => decider.decide(command, events.reduce(decider.evolve, decider.initialState()));
          return {
            then(expected: Event[]) {
              expect(run()).toEqual(expected);
            },
            thenThrows(match?: string | RegExp | (new (...args: never[]) => Error)) {
              expect(run).toThrow(match as never);
            },
          };
        },
      };
    },
  };
}
